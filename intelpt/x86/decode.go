package x86

import "encoding/binary"

// short is the error for an instruction that needs more than the n bytes
// available: ErrTruncated when code simply ends, ErrInvalid when the
// instruction would be longer than MaxLen.
func short(n int) error {
	if n >= MaxLen {
		return ErrInvalid
	}
	return ErrTruncated
}

// Decode decodes the instruction at the start of code in the given mode
// and fills in. It returns ErrTruncated when code ends before the
// instruction does and ErrInvalid when the bytes are not an instruction (in
// both cases in is zeroed). Decode does not allocate.
//
// Decoding follows Intel 64 hardware (as GNU objdump -M intel64 does): in
// 64-bit mode the 66 prefix does not change the size of a near branch's
// displacement, REX.W beats 66, a REX prefix followed by a legacy prefix is
// ignored, and the last of F2/F3 is the one that selects the instruction.
func Decode(code []byte, mode Mode, in *Inst) error {
	// Fast path: 32/64-bit mode, at most one legacy prefix other than 67,
	// at most a REX, and an opcode of the one-byte or 0F map whose length
	// depends only on the ModRM, SIB and immediate (fastAttr). Computed
	// mostly without branches: x86 lengths are data-dependent, so
	// branches mispredict. Everything else goes to decodeSlow, which
	// handles every case on its own (TestFastPathEqualsSlow).
	if len(code) < 16 || mode-Mode32 > Mode64-Mode32 {
		return decodeSlow(code, mode, in)
	}
	w := binary.LittleEndian.Uint64(code)
	pt := &fastPrefix[mode&1] // Mode32: 0, Mode64: 1
	k := pt[byte(w)]
	i := uint(1)
	osz := uint(0)
	if k >= fpLegacy {
		if k > fp66 {
			return decodeSlow(code, mode, in)
		}
		osz = uint(k & 1) // fp66 is odd
		w >>= 8
		i++
		k = pt[byte(w)]
		if k >= fpLegacy {
			return decodeSlow(code, mode, in)
		}
	}
	// The data path avoids table loads where arithmetic will do: the
	// loop that walks code is bound by the latency of this chain.
	b0 := uint(byte(w))
	r := (((b0 ^ 0x40) - 0x10) >> 63) & uint(mode&1) // REX (0x40-0x4F) in 64-bit mode
	rexW := b0 >> 3 & r
	w >>= (8 * r) & 63
	i += r
	op := byte(w)
	if pt[op] != 0 { // REX then a prefix
		return decodeSlow(code, mode, in)
	}
	e := ((uint(op) ^ 0x0F) - 1) >> 63 // 0F escape
	w >>= (8 * e) & 63
	i += e
	op = byte(w)
	a := fastAttr[e<<8|uint(op)]
	m := byte(w >> 8)
	mt := modrmFast[m]
	s5 := sibBase5[byte(w>>16)]
	if a&fastSlow[mode&1] != 0 {
		return decodeSlow(code, mode, in)
	}
	hasRM := uint(a>>fastRMShift) & 1
	m &= byte(-hasRM)
	ml := (uint(mt&0xFF) + uint(s5&byte(mt>>8))) & -hasRM
	isz := uint(a>>fastCtx[uint(mode&1)<<2|osz<<1|rexW]) & 0xF
	rel := isz & -(uint(a>>fastRelShift) & 1)
	sh := 32 - 8*rel
	in.Len = uint8(i + ml + isz)
	in.Class = Class(a >> fastClassShift)
	in.Map = uint8(e)
	in.Opcode = op
	in.ModRM = m
	in.Encoding = Legacy
	in.Flags = flagOf[mode] | uint8(hasRM)*FlagModRM | uint8(osz&^(uint(mode)&1))*FlagOpSize16
	in.Disp = int32(uint32(w>>8)<<sh) >> sh
	return nil
}

// decodeSlow decodes any instruction, one step at a time.
func decodeSlow(code []byte, mode Mode, in *Inst) error {
	n := len(code)
	lim := n
	if lim > MaxLen {
		lim = MaxLen
	}
	if mode-Mode16 > Mode64-Mode16 || n == 0 {
		*in = Inst{}
		if n == 0 && mode-Mode16 <= Mode64-Mode16 {
			return ErrTruncated
		}
		return ErrInvalid
	}
	var (
		i   int
		pf  uint // pfW, pfASZ, pfOSZ, pfLock
		rep uint8
		rex uint8
	)
	b := code[0]
	if b&0xF0 == 0x40 && mode == Mode64 && n > 1 && prefixKind[code[1]] == pNone {
		// the common case: REX alone
		rex = b
		pf = uint(rex>>3) & pfW
		i = 1
		b = code[1]
	} else if prefixKind[b] != pNone {
		for {
			k := prefixKind[b]
			if k == pNone || k == pREX && mode != Mode64 {
				break
			}
			switch k {
			case pREX:
				rex = b
				i++
				if i >= lim {
					*in = Inst{}
					return short(n)
				}
				b = code[i]
				continue
			case p66:
				pf |= pfOSZ
			case p67:
				pf |= pfASZ
			case pF2, pF3:
				rep = b
			case pLock:
				pf |= pfLock
			}
			rex = 0 // a REX prefix counts only right before the opcode
			i++
			if i >= lim {
				*in = Inst{}
				return short(n)
			}
			b = code[i]
		}
		pf |= uint(rex>>3) & pfW
	}
	i++
	op := b
	a := map0[op]
	mp := uint8(Map0)
	enc := Legacy
	if a&aEsc != 0 {
		if op != 0x0F {
			return decodeEsc(code, mode, in, i, op, pf, flagOf[mode])
		}
		if i >= lim {
			*in = Inst{}
			return short(n)
		}
		op = code[i]
		i++
		a = map0F[op]
		mp = Map0F
		if a&aEsc != 0 {
			if i >= lim {
				*in = Inst{}
				return short(n)
			}
			switch op {
			case 0x38:
				op = code[i]
				i++
				a = map0F38
				mp = Map0F38
			case 0x3A:
				op = code[i]
				i++
				a = map0F3A
				mp = Map0F3A
			default: // 0F 0F: 3DNow!, ModRM then the opcode as an imm8 suffix
				a = aModRM | immB
				enc = Now3D
			}
		}
	}
	if a&(aInvalid|aInv64) != 0 {
		if a&aInvalid != 0 || mode == Mode64 {
			*in = Inst{}
			return ErrInvalid
		}
	}
	// sz packs the operand-size index (bits 0-1) and the address-size
	// index (bits 2-3) for this mode and these prefixes.
	sz := sizeIdx[uint(mode)<<3|pf&7]
	flag := flagOf[mode] | opFlags[sz]
	class := Class(a >> classShift)
	imm := a & immMask
	var mrm uint8
	if a&aModRM != 0 {
		if i >= lim {
			*in = Inst{}
			return short(n)
		}
		m := code[i]
		i++
		mrm = m
		flag |= FlagModRM
		if a&aRegOnly == 0 {
			// d: displacement size, sibFlag, sibMod0 (mod 0: base 5 means disp32)
			d := modrmTab[uint(sz&szAddr16)<<6|uint(m)]
			if d&sibFlag != 0 {
				if i >= lim {
					*in = Inst{}
					return short(n)
				}
				if d&sibMod0 != 0 && code[i]&7 == 5 {
					i += 4
				}
				i++
			}
			i += int(d & 0xF)
		}
		if a&aSpecial != 0 {
			reg := m >> 3 & 7
			switch {
			case mp == Map0 && op == 0xF6:
				if reg < 2 {
					imm = immB
				}
			case mp == Map0 && op == 0xF7:
				if reg < 2 {
					imm = immZ
				}
			case mp == Map0: // FF
				switch reg {
				case 2:
					class = CallIndirect
				case 3:
					class = CallFar
				case 4:
					class = JumpIndirect
				case 5:
					class = JumpFar
				}
			case op == 0x01:
				switch m {
				case 0xC1:
					class = Vmcall
				case 0xC2:
					class = Vmlaunch
				case 0xC3:
					class = Vmresume
				case 0xEC:
					if rep == 0xF3 {
						class = Uiret
					}
				}
			case op == 0x22:
				if reg == 3 && rex&4 == 0 && pf&pfLock == 0 { // lock mov cr: cr8 on AMD
					class = MovCR3
				}
			case op == 0x78:
				if pf&pfOSZ != 0 || rep == 0xF2 { // extrq/insertq xmm, imm8, imm8
					imm = immW
				}
			case op == 0xAE:
				if reg == 4 && rep == 0xF3 && pf&pfOSZ == 0 {
					class = Ptwrite
				}
			case op == 0xC7:
				if reg == 6 && m < 0xC0 && pf&pfOSZ == 0 && rep != 0xF3 {
					class = Vmptrld
				}
			}
		}
	}
	if enc == Now3D {
		if i >= lim {
			*in = Inst{}
			return short(n)
		}
		op = code[i]
	}
	end := i
	if imm != immNone {
		end += int(immSize[uint(imm)<<4|uint(sz)])
	}
	if end > lim {
		*in = Inst{}
		return short(n)
	}
	var disp int32
	if a&aRel != 0 {
		switch end - i {
		case 1:
			disp = int32(int8(code[i]))
		case 2:
			disp = int32(int16(uint16(code[i]) | uint16(code[i+1])<<8))
		default:
			_ = code[i+3]
			disp = int32(uint32(code[i]) | uint32(code[i+1])<<8 | uint32(code[i+2])<<16 | uint32(code[i+3])<<24)
		}
	}
	in.Len = uint8(end)
	in.Class = class
	in.Map = mp
	in.Opcode = op
	in.ModRM = mrm
	in.Encoding = enc
	in.Flags = flag
	in.Disp = disp
	return nil
}

// decodeEsc decodes the instructions that start with C4, C5, 62 or 8F:
// VEX, EVEX and XOP encodings, or (outside 64-bit mode, when the next byte
// is a register ModRM) LES, LDS and BOUND; 8F is POP r/m unless the next
// byte selects an XOP map. i indexes the byte after op.
func decodeEsc(code []byte, mode Mode, in *Inst, i int, op byte, pf uint, flag uint8) error {
	*in = Inst{}
	n := len(code)
	lim := n
	if lim > MaxLen {
		lim = MaxLen
	}
	if i >= lim {
		return short(n)
	}
	b1 := code[i]
	legacy := false
	switch op {
	case 0xC4, 0xC5, 0x62:
		legacy = mode != Mode64 && b1 < 0xC0
	case 0x8F:
		legacy = b1&0x1F < 8
	}
	mp := uint8(Map0)
	enc := Legacy
	sz := 0
	if !legacy {
		switch op {
		case 0xC5: // C5 [R vvvv L pp]
			i++
			mp = Map0F
			enc = VEX
		case 0xC4: // C4 [RXB mmmmm] [W vvvv L pp]
			mp = b1 & 0x1F
			i += 2
			enc = VEX
			if mp < Map0F || mp > Map0F3A {
				return ErrInvalid
			}
		case 0x62: // 62 [R X B R' 0 mmm] [W vvvv 1 pp] [z L'L b V' aaa]
			mp = b1 & 7
			i += 3
			enc = EVEX
			switch mp {
			case Map0F, Map0F38, Map0F3A, 5, 6:
			default:
				return ErrInvalid
			}
		default: // 8F [RXB mmmmm] [W vvvv L pp]
			mp = b1 & 0x1F
			i += 2
			enc = XOP
			if mp > 10 {
				return ErrInvalid
			}
		}
		if i >= lim {
			return short(n)
		}
		op = code[i]
		i++
		switch mp {
		case Map0F:
			a := map0F[op]
			if a&aVexIB != 0 {
				sz = 1
			}
			if a&aVexNoRM != 0 && enc == VEX {
				flag |= noModRM
			}
		case Map0F3A, 8:
			sz = 1
		case 10:
			sz = 4
		}
	}
	var mrm uint8
	if flag&noModRM == 0 {
		if i >= lim {
			return short(n)
		}
		m := code[i]
		i++
		mrm = m
		flag |= FlagModRM
		d := modrmTab[uint(sizeIdx[uint(mode)<<3|pf&7]&szAddr16)<<6|uint(m)]
		if d&sibFlag != 0 {
			if i >= lim {
				return short(n)
			}
			if d&sibMod0 != 0 && code[i]&7 == 5 {
				i += 4
			}
			i++
		}
		i += int(d & 0xF)
	}
	i += sz
	if i > lim {
		return short(n)
	}
	*in = Inst{Len: uint8(i), Map: mp, Opcode: op, ModRM: mrm, Encoding: enc, Flags: flag &^ noModRM}
	return nil
}
