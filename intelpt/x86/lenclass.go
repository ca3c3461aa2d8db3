package x86

import (
	"encoding/binary"
	"math/bits"
)

// LenClass returns the length and the class of the instruction at
// code[off:] in mode: Decode's Len and Class, and Decode's error (n and
// class are 0 and Other when err is not nil; an off outside code is
// ErrTruncated). It is what a walker over code needs to step and to stop
// at a branch; a caller that needs the rest of Inst (the displacement of a
// direct branch) calls Decode for that instruction.
//
// LenClass is built for walking code, where each instruction starts where
// the previous one ended: it returns its results in registers (no Inst to
// store and load back), it takes an offset instead of a subslice (no slice
// to compute before the first load), and in 64-bit mode, with at least 16
// bytes from off on, it decodes in tiers: LenClass64 (88 % of libc's
// instructions: one entry for the first two bytes and the ModRM's
// length); lcTier2 (one legacy prefix or a REX before 0F, then what
// LenClass64 decodes; VEX2: 7 % more); the common rest (up to three
// legacy prefixes, then a REX or a 0F, the one-byte and 0F maps) with four
// table lookups issued at once, one for each place the opcode and the
// ModRM can be at, picked with conditional moves. REX 0F, TEST with an
// immediate, the FF group (indirect calls and jumps), MOV r64, imm64 after
// a REX, VEX and EVEX take a slower path there (lcMoreLen); everything
// else is decoded by Decode.
func LenClass(code []byte, off int, mode Mode) (n int, class Class, err error) {
	if mode != Mode64 || off < 0 || len(code)-off < 16 {
		return lenClassDecode(code, off, mode)
	}
	w := binary.LittleEndian.Uint64(code[off : off+8 : off+8])
	if n, class := LenClass64(w); n != 0 {
		return n, class, nil
	}
	if n, class := lcTier2(w); n != 0 {
		return n, class, nil
	}
	t := lcTabs[0]
	x0 := t.op00[byte(w)]
	i := uint(0) // legacy prefixes
	if x0&lcLegacy != 0 {
		var ok bool
		if i, t, ok = lcPrefixes(w); !ok {
			return lenClassDecode(code, off, mode)
		}
		w >>= 8 * i // at most 3 bytes: the 5 left hold REX, 0F, opcode, ModRM and SIB
		x0 = t.op00[byte(w)]
	}
	// Every table entry the instruction may need, loaded at once: the
	// opcode's attributes with the opcode at byte 0 (no REX, no 0F) and
	// at byte 1, in the one-byte map (after a REX) or in the 0F map
	// (after 0F), and the ModRM's length with the ModRM at bytes 1 and 2,
	// indexed by the ModRM and the next byte's low three bits (SIB.base 5
	// with mod 0 adds a disp32). REX 0F (2 % of libc's instructions) is
	// left to lcMoreLen: two more candidates would not fit in registers.
	x1 := t.op01[byte(w>>8)]
	y1 := t.op11[byte(w>>8)]
	m1 := uint(t.modrm[0][(w>>8)&0x7FF]) // uint: conditional moves do not move bytes
	m2 := uint(t.modrm[1][(w>>16)&0x7FF])
	// Pick without branches (each if below is a conditional move):
	// whether there is a REX or a 0F escape is data, and a mispredicted
	// branch costs more than these moves.
	a, rm := x0, m1
	if x0&lc0F != 0 {
		a = y1
	}
	if x0&lcREX != 0 {
		a = x1
	}
	if x0&(lc0F|lcREX) != 0 {
		rm = m2
	}
	if a&lcSlow != 0 {
		if a&lcMore != 0 {
			if n, class, ok := lcMoreLen(w, i, t); ok {
				return n, class, nil
			}
		}
		return lenClassDecode(code, off, mode)
	}
	if a&lcRM == 0 {
		rm = 0
	}
	return int(i + rm + uint(a&lcLen)), Class(a >> lcClassShift), nil
}

// lenClassDecode is LenClass by way of Decode.
//
//go:noinline
func lenClassDecode(code []byte, off int, mode Mode) (int, Class, error) {
	if off < 0 || off > len(code) {
		return 0, Other, ErrTruncated
	}
	var in Inst
	err := Decode(code[off:], mode, &in)
	return int(in.Len), in.Class, err
}

// lcMoreLen decodes the 64-bit instructions that LenClass's tables leave
// out but that are common in compiled code, w holding the bytes after i
// legacy prefixes and t the tables for those prefixes: REX 0F, F6 and F7
// (TEST takes an immediate, the rest of the group does not), FF (the class
// depends on ModRM.reg: indirect and far jumps and calls), B8-BF with a REX
// (REX.W makes the immediate 8 bytes), and VEX (C4, C5) and EVEX (62)
// without legacy prefixes. ok is false for everything else (an invalid
// map, legacy prefixes before VEX or EVEX): Decode decodes those.
//
//go:noinline
func lcMoreLen(w uint64, i uint, t *lcTables) (n int, class Class, ok bool) {
	p := uint(0)
	rexW := false
	if byte(w)&0xF0 == 0x40 {
		rexW = w&8 != 0
		p = 1
		w >>= 8
	}
	// w: opcode, ModRM, SIB; or a VEX or EVEX prefix's payload, opcode,
	// ModRM, SIB
	switch op := byte(w); {
	case op == 0x0F && p == 1: // REX 0F opcode
		a := t.op12[byte(w>>8)]
		if a&lcSlow != 0 {
			return 0, Other, false
		}
		ln := uint(a & lcLen)
		if a&lcRM != 0 {
			ln += uint(t.modrm[2][(w>>16)&0x7FF])
		}
		return int(i + ln), Class(a >> lcClassShift), true
	case op == 0xF6 || op == 0xF7 || op == 0xFF:
		m := byte(w >> 8)
		ln := p + 1 + lcModRMLen(m, byte(w>>16))
		reg := m >> 3 & 7
		switch {
		case op == 0xFF:
			class = lcGroup5[reg]
		case reg >= 2:
		case op == 0xF6:
			ln++
		case t == lcTabs[1] && !rexW: // 66, and REX.W does not override it
			ln += 2
		default:
			ln += 4
		}
		return int(i + ln), class, true
	case op >= 0xB8 && op <= 0xBF: // MOV r, imm
		switch {
		case rexW:
			return int(i + p + 9), Other, true
		case t == lcTabs[1]:
			return int(i + p + 3), Other, true
		}
		return int(i + p + 5), Other, true
	}
	if i != 0 || p != 0 {
		return 0, Other, false
	}
	var ln uint
	var imm uint8
	switch b1 := byte(w >> 8); byte(w) {
	case 0xC5: // C5 [R vvvv L pp] opcode (map 0F)
		imm = lcVex0F[byte(w>>16)]
		w >>= 24
		ln = 3
	case 0xC4: // C4 [RXB mmmmm] [W vvvv L pp] opcode
		switch b1 & 0x1F {
		case Map0F:
			imm = lcVex0F[byte(w>>24)]
		case Map0F38:
		case Map0F3A:
			imm = lcVexIB
		default:
			return 0, Other, false
		}
		w >>= 32
		ln = 4
	default: // 62 [R X B R' 0 mmm] [W vvvv 1 pp] [z L'L b V' aaa] opcode
		switch b1 & 7 {
		case Map0F:
			imm = lcVex0F[byte(w>>32)] &^ lcVexNoRM // EVEX always has a ModRM
		case Map0F38, 5, 6:
		case Map0F3A:
			imm = lcVexIB
		default:
			return 0, Other, false
		}
		w >>= 40
		ln = 5
	}
	if imm&lcVexNoRM == 0 {
		ln += lcModRMLen(byte(w), byte(w>>8))
	}
	return int(ln + uint(imm&lcVexIB)), Other, true
}

// lcGroup5 is the class of FF by ModRM.reg.
var lcGroup5 = [8]Class{2: CallIndirect, 3: CallFar, 4: JumpIndirect, 5: JumpFar}

// lcModRMLen is the length of a ModRM, its SIB and its displacement in
// 32- or 64-bit addressing.
func lcModRMLen(m, sib byte) uint {
	return uint(lcTabs[0].modrm[0][uint(sib&7)<<8|uint(m)]) - 1
}

// lcPrefixes counts the legacy prefixes at the start of w (in 64-bit mode)
// and returns the tables for them (lcTabs[1] if one is 66). ok is false
// after more than three: the general decoder then checks the 15-byte
// limit.
func lcPrefixes(w uint64) (i uint, t *lcTables, ok bool) {
	t = lcTabs[0]
	for i = 0; i < 4; i++ {
		a := lcTabs[0].op00[byte(w)]
		if a&lcLegacy == 0 {
			return i, t, true
		}
		if byte(w) == 0x66 {
			t = lcTabs[1]
		}
		w >>= 8
	}
	return 0, nil, false
}

// An lcTables entry for an opcode (op00, op01, op11, op12).
const (
	lcLen        = 0xF     // the length from the first byte after the legacy prefixes to the end of the immediate, less the ModRM, SIB and displacement
	lcRM         = 1 << 4  // a ModRM follows
	lcSlow       = 1 << 5  // the tables do not give the length: lcMoreLen (if lcMore) or Decode
	lcMore       = 1 << 6  // REX 0F, F6, F7, FF, B8-BF after a REX, C4, C5, 62: lcMoreLen
	lcREX        = 1 << 7  // (op00) a REX prefix
	lcLegacy     = 1 << 8  // (op00) a legacy prefix
	lc0F         = 1 << 9  // (op00) the 0F escape
	lcClassShift = 11      // bits 11-15: the class
	lcVexIB      = 1       // lcVex0F: an imm8 follows
	lcVexNoRM    = 2       // lcVex0F: no ModRM (VEX only: vzeroupper, vzeroall)
	lcCtx66      = 1       // lcTabs index with a 66 prefix
	lcModRMIdx   = 1 << 11 // ModRM | (next byte & 7) << 8
)

// lcTables are LenClass's tables for one operand-size context (with or
// without 66), in one variable so that one register addresses them all.
type lcTables struct {
	op00  [256]uint16          // one-byte map, opcode at byte 0
	op01  [256]uint16          // one-byte map, opcode at byte 1 (after a REX)
	op11  [256]uint16          // 0F map, opcode at byte 1 (after 0F)
	op12  [256]uint16          // 0F map, opcode at byte 2 (after REX 0F)
	modrm [3][lcModRMIdx]uint8 // [ModRM at byte 1, 2, 3][lcModRMIdx]: bytes up to the end of the displacement
}

// LenClass's tables, lcTab (without 66, with 66) and lcVex0F ([opcode]:
// lcVexIB, lcVexNoRM, VEX and EVEX map 0F), with lcRMLen and lcTier
// below, are Go literals in lenclass_tables.go, written by
// TestLenClassTables from buildLenClass and buildLenClassPair: building
// them at init was 0.4 M of the 4.6 M instructions of every iotap
// process's start, whether it decodes x86 or not.

var lcTabs = [2]*lcTables{&lcTab[0], &lcTab[1]}

// buildLenClass builds LenClass's tables (lcTab, lcVex0F) from the
// general decoder's.
func buildLenClass(lcTab *[2]lcTables, lcVex0F *[256]uint8) {
	for op := range 256 {
		a := map0F[op]
		if a&aVexIB != 0 {
			lcVex0F[op] |= lcVexIB
		}
		if a&aVexNoRM != 0 {
			lcVex0F[op] |= lcVexNoRM
		}
	}
	for ctx := range lcTab {
		t := &lcTab[ctx]
		for q := range t.modrm {
			for x := range lcModRMIdx {
				m, base := x&0xFF, x>>8
				d := modrmTab[m] // 32/64-bit addressing
				n := q + 1 + 1 + int(d&0xF)
				if d&sibFlag != 0 {
					n++
					if d&sibMod0 != 0 && base == 5 {
						n += 4
					}
				}
				t.modrm[q][x] = uint8(n)
			}
		}
		sz := uint(osz32 | szAddr64) // operand-size context (sizeIdx value) in 64-bit mode
		if ctx == lcCtx66 {
			sz = osz16in64 | szAddr64
		}
		entry := func(a attr, e, p, op int) uint16 {
			var f uint16
			if a&(aEsc|aInvalid|aInv64|aRegOnly|aSpecial) != 0 || a&immMask == immMoffs ||
				(e == 0 && prefixKind[op] != pNone) || (e == 0 && p == 1 && a&immMask == immV) ||
				(ctx == lcCtx66 && p == 1 && a&immMask == immZ) {
				// (after a REX, REX.W makes immV 8 bytes and, over 66, immZ 4)
				f |= lcSlow
			}
			if e == 0 && (op == 0xF6 || op == 0xF7 || op == 0xFF || (p == 1 && op >= 0xB8 && op <= 0xBF) ||
				(p == 0 && (op == 0xC4 || op == 0xC5 || op == 0x62))) {
				f |= lcMore
			}
			n := uint16(immSize[uint(a&immMask)<<4|sz])
			if a&aModRM != 0 {
				f |= lcRM
			} else {
				n += uint16(p + 1)
			}
			return f | n | uint16(a>>classShift&0x1F)<<lcClassShift
		}
		for op := range 256 {
			t.op00[op] = entry(map0[op], 0, 0, op)
			t.op01[op] = entry(map0[op], 0, 1, op)
			t.op11[op] = entry(map0F[op], 1, 1, op)
			t.op12[op] = entry(map0F[op], 1, 2, op)
			if op == 0x0F {
				t.op00[op] |= lc0F
				t.op01[op] |= lcSlow | lcMore // REX 0F: lcMoreLen
			}
			switch prefixKind[op] {
			case pNone:
			case pREX:
				t.op00[op] |= lcREX
			default:
				t.op00[op] |= lcLegacy
			}
		}
	}
}

// An lcPair entry, for the first two bytes of an instruction in 64-bit
// mode without legacy prefixes.
const (
	lcPairAt1        = 0       // bits 0-5: the ModRM is at byte 1 (shift for LenClass64's m)
	lcPairAt2        = 8       // the ModRM is at byte 2 (after a REX or 0F)
	lcPairNoRM       = 16      // there is no ModRM (nor SIB or displacement)
	lcPairLenShift   = 6       // bits 6-9: the length less the ModRM, SIB and displacement (lcRMLen); 0: LenClass64 does not decode it
	lcPairOsz        = 1 << 10 // a 66 prefix changes the entry (lcTab[1]'s differs)
	lcPairClassShift = 11      // bits 11-15: the class
)

// lcTier values: what lcTier2 does with the first byte.
const (
	lcTierNone   = iota
	lcTierLegacy // a legacy prefix but 66
	lcTier66
	lcTierREX  // a REX: only before 0F
	lcTierVEX2 // C5
)

// lcPair (in lcpair_table.go, written by TestLCPairTable from
// buildLCPair) is indexed by the first byte << 8 | the second byte, so
// that the entries of one opcode (by its ModRM or displacement) share
// cache lines: 1.2 to 1.4 times faster than the other way round. It is a
// Go array literal rather than built by init because building its 65,536
// entries took 6 M of the 10 M instructions, and about 1 ms, of every
// iotap process's start, whether it decodes x86 or not; the literal costs
// nothing until a page of it is read.

// lcRMLen (lenclass_tables.go) is the length of a ModRM, its SIB and its
// displacement in 64-bit addressing (1 to 6), by ModRM | (next byte & 7)
// << 8; lcTier (lenclass_tables.go) is lcTier2's kind of the first byte.

// buildLCPair builds lcPair's entries from LenClass's other tables (after
// init).
func buildLCPair(p *[1 << 16]uint16) {
	for b0 := range 256 {
		for b1 := range 256 {
			e := lcPairEntry(&lcTab[0], b0, b1)
			if e != lcPairEntry(&lcTab[1], b0, b1) {
				e |= lcPairOsz // 66 changes it: not after 66 (lcTier2)
			}
			p[b0<<8|b1] = e
		}
	}
}

// buildLenClassPair builds lcRMLen and lcTier from LenClass's other
// tables (lcTab).
func buildLenClassPair(lcTab *[2]lcTables, lcRMLen *[lcModRMIdx]uint8, lcTier *[256]uint8) {
	for x := range lcModRMIdx {
		lcRMLen[x] = lcTab[0].modrm[0][x] - 1
	}
	for b0 := range 256 {
		switch x := lcTab[0].op00[b0]; {
		case b0 == 0x66:
			lcTier[b0] = lcTier66
		case x&lcLegacy != 0:
			lcTier[b0] = lcTierLegacy
		case x&lcREX != 0:
			lcTier[b0] = lcTierREX
		case b0 == 0xC5:
			lcTier[b0] = lcTierVEX2
		}
	}
}

// lcPairEntry is the lcPair entry for the first two bytes b0 and b1 of an
// instruction with the operand-size context of t (lcTab[0] or lcTab[1],
// after 66), from the entries LenClass's table path uses.
func lcPairEntry(t *lcTables, b0, b1 int) uint16 {
	class := func(a uint16) uint16 { return a &^ (1<<lcPairClassShift - 1) }
	ln := func(n uint16) uint16 { return n << lcPairLenShift }
	is66 := t == &lcTab[lcCtx66]
	x0 := t.op00[b0]
	switch {
	case x0&lcLegacy != 0:
	case x0&lcREX != 0: // REX opcode
		a := t.op01[b1]
		switch {
		case b1 >= 0xB8 && b1 <= 0xBF: // MOV r, imm: REX.W makes the immediate 8 bytes, over 66
			switch {
			case b0&8 != 0:
				return lcPairNoRM | ln(2+8)
			case is66:
				return lcPairNoRM | ln(2+2)
			}
			return lcPairNoRM | ln(2+4)
		case t.op00[b1]&(lcREX|lcLegacy|lc0F) != 0 || a&lcSlow != 0:
		case a&lcRM != 0:
			return lcPairAt2 | ln(2+a&lcLen) | class(a)
		default:
			return lcPairNoRM | ln(a&lcLen) | class(a)
		}
	case x0&lc0F != 0: // 0F opcode
		a := t.op11[b1]
		switch {
		case a&lcSlow != 0:
		case a&lcRM != 0:
			return lcPairAt2 | ln(2+a&lcLen) | class(a)
		default:
			return lcPairNoRM | ln(a&lcLen) | class(a)
		}
	case b0 == 0xF6 || b0 == 0xF7 || b0 == 0xFF: // opcode ModRM: the group is in ModRM.reg
		reg := b1 >> 3 & 7
		n, c := uint16(1), Other
		switch {
		case b0 == 0xFF:
			c = lcGroup5[reg]
		case reg >= 2:
		case b0 == 0xF6:
			n++
		case is66:
			n += 2
		default:
			n += 4
		}
		return lcPairAt1 | ln(n) | uint16(c)<<lcPairClassShift
	case x0&lcSlow != 0:
	case x0&lcRM != 0: // opcode ModRM
		return lcPairAt1 | ln(1+x0&lcLen) | class(x0)
	default:
		return lcPairNoRM | ln(x0&lcLen) | class(x0)
	}
	return lcPairNoRM // length 0: LenClass64 leaves it to LenClass
}

// lcTier2 decodes, for LenClass, the instructions that LenClass64 leaves
// out but that take one more table entry: one legacy prefix, or a REX
// before 0F, then what LenClass64 decodes (lcPair's entry for the next
// two bytes: after 66, only if 66 does not change it), and VEX2 (C5) with
// an opcode in map 0F. n is 0 for the rest.
func lcTier2(w uint64) (n int, class Class) {
	switch lcTier[byte(w)] {
	case lcTierREX:
		if byte(w>>8) != 0x0F {
			return 0, Other
		}
	case lcTierLegacy:
	case lcTier66:
		if lcPair[bits.ReverseBytes16(uint16(w>>8))]&lcPairOsz != 0 {
			return 0, Other
		}
	case lcTierVEX2: // C5 [R vvvv L pp] opcode ModRM
		imm := uint(lcVex0F[byte(w>>16)])
		n := 3 + imm&lcVexIB
		if imm&lcVexNoRM == 0 {
			n += uint(lcRMLen[w>>24&(lcModRMIdx-1)])
		}
		return int(n), Other
	default:
		return 0, Other
	}
	if n, class = LenClass64(w >> 8); n != 0 {
		n++
	}
	return n, class
}

// LenClass64 decodes the common 64-bit instructions from their first
// eight bytes w (little-endian: code[off:off+8]), in few enough machine
// instructions that the compiler inlines it into a walker: it returns the
// instruction's length and class when its first two bytes say how to find
// its length (no legacy prefix; at most a REX or 0F before the opcode;
// not VEX or EVEX; not F6, F7 or FF after a REX: 88 % of libc's
// instructions), and n = 0 otherwise. A walker calls LenClass when n is 0,
// and for the last 15 bytes of code:
//
//	for off <= len(code)-16 {
//		n, class := x86.LenClass64(binary.LittleEndian.Uint64(code[off:]))
//		if n == 0 {
//			n, class, err = x86.LenClass(code, off, x86.Mode64)
//			...
//		}
//		...
//	}
//
// When n is not 0, n and class are what LenClass and Decode give for that
// code in 64-bit mode with at least n bytes from off on (n is at most 12).
// Without a call per instruction, such a walk does not keep its values in
// memory across calls, and LenClass64 has no branch: about 20 machine
// instructions.
func LenClass64(w uint64) (n int, class Class) {
	e := uint(lcPair[bits.ReverseBytes16(uint16(w))])
	m1 := uint(lcRMLen[w>>8&(lcModRMIdx-1)])
	m2 := uint(lcRMLen[w>>16&(lcModRMIdx-1)])
	// The ModRM's length at byte 1, at byte 2, or 0 without a ModRM, by a
	// shift (e's low six bits: the shift instruction ignores the rest), not
	// a branch: in a loop the compiler makes an if a branch, and whether
	// there is a REX is data (43 % of libc's instructions have one).
	m := (m1 | m2<<lcPairAt2) >> (e & 63) & 7
	return int(m + e>>lcPairLenShift&0xF), Class(e >> lcPairClassShift)
}
