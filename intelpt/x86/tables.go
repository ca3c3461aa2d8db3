package x86

// Opcode attributes, one uint32 per opcode of a map. The tables are built
// once at package initialisation from the lists below, which transcribe the
// opcode maps of the Intel SDM, volume 2, appendix A (one-byte map,
// two-byte map, three-byte maps, group table A-6) plus the
// AMD APM volume 3 for XOP and 3DNow!.
type attr uint32

const (
	// bits 0-3: immediate kind
	immNone  = 0
	immB     = 1 // 1 byte
	immW     = 2 // 2 bytes
	immZ     = 3 // 2 bytes at operand size 16, else 4
	immV     = 4 // 2, 4 or 8 bytes by operand size (mov r, imm: B8-BF)
	immMoffs = 5 // address size (mov al/ax, moffs: A0-A3)
	immEnter = 6 // 3 bytes (enter imm16, imm8)
	immPtr   = 7 // 2 + (2 or 4): far pointer seg:off (9A, EA)
	immRelZ  = 8 // like immZ, but 4 bytes in 64-bit mode whatever 66 says (near branches)
	immMask  = 15

	aModRM   attr = 1 << 4  // a ModRM byte follows (then SIB and displacement)
	aInv64   attr = 1 << 5  // invalid in 64-bit mode
	aSpecial attr = 1 << 6  // class or immediate depends on ModRM or prefixes
	aRel     attr = 1 << 7  // the immediate is a branch displacement
	aEsc     attr = 1 << 8  // escape: another map or a VEX/EVEX/XOP prefix
	aInvalid attr = 1 << 9  // undefined opcode
	aVexIB   attr = 1 << 10 // (map 0F) the VEX/EVEX form takes an imm8
	aVexNoRM attr = 1 << 11 // (map 0F) the VEX form has no ModRM (vzeroupper/vzeroall)
	aRegOnly attr = 1 << 12 // ModRM.mod is ignored: always a register form (mov cr/dr/tr)

	classShift = 16
)

// fastPrefix kinds.
const (
	fpNone   = 0
	fpREX    = 1
	fpLegacy = 2 // F2, F3, F0, segment overrides
	fp66     = 3
	fpSlow   = 4 // 67
)

// fastAttr bits.
const (
	fastSlowAlways = 1 << 0 // escape, invalid, ModRM-dependent class or size, moffs
	fastSlow64     = 1 << 1 // invalid in 64-bit mode
	fastRMShift    = 2      // bit 2: a ModRM follows
	fastRelShift   = 3      // bit 3: the immediate is a branch displacement
	fastClassShift = 8      // bits 8-15: class
	fastImmShift   = 16     // bits 16-31: immediate size for operand-size contexts 0-3
)

// Prefix state bits (the low three index sizeIdx).
const (
	pfW    = 1 // REX.W right before the opcode
	pfASZ  = 2 // 67
	pfOSZ  = 4 // 66
	pfLock = 8 // F0
)

// Size index: bits 0-1 operand size (osz16, osz32, osz64, osz16in64), bits
// 2-3 address size (0: 32, szAddr16, szAddr64).
const (
	osz16     = 0 // 16-bit operand size in 16/32-bit mode
	osz32     = 1
	osz64     = 2
	osz16in64 = 3 // 66 in 64-bit mode: near branches ignore it
	szAddr16  = 4
	szAddr64  = 8

	noModRM = 0x80 // internal flag bit in decodeEsc
)

var (
	sizeIdx  [32]uint8     // [mode<<3 | pfOSZ|pfASZ|pfW]
	immSize  [9 << 4]uint8 // [immKind<<4 | sizeIdx]
	opFlags  [16]uint8     // [sizeIdx]: FlagOpSize16
	flagOf   = [4]uint8{Mode16: FlagWrap32, Mode32: FlagWrap32}
	modrmTab [512]uint8 // [addr16<<8 | ModRM]: disp size | sibFlag | sibMod0

	// Fast path tables (32/64-bit addressing, no prefixes).
	fastPrefix [2][256]uint8 // [mode&1][byte]: fpNone, fpREX, fpLegacy, fp66, fpSlow
	// fastAttr [512]uint64 (lenclass_tables.go): [is0F<<8 | opcode]
	fastSlow = [2]uint64{fastSlowAlways, fastSlowAlways | fastSlow64}
	// fastCtx [8]uint8 (lenclass_tables.go): [mode&1<<2 | 66<<1 | REX.W]: shift of the immediate size in fastAttr
	modrmFast [256]uint16 // [ModRM]: bytes of ModRM+SIB+disp | 0xFF00 when SIB.base 5 adds disp32
	sibBase5  [256]uint8  // [SIB]: 4 when the base is 5
)

const (
	sibFlag = 0x80 // a SIB byte follows
	sibMod0 = 0x40 // ... and mod is 0 (SIB.base 5 means disp32)
)

var (
	map0    [256]attr
	map0F   [256]attr
	map0F38 attr = aModRM
	map0F3A attr = aModRM | immB
)

// Legacy prefix kinds.
const (
	pNone  = iota
	pOther // segment overrides
	pLock
	p66
	p67
	pF2
	pF3
	pREX
)

var prefixKind [256]uint8

func set(t *[256]attr, a attr, ops ...int) {
	for _, op := range ops {
		t[op] |= a
	}
}

func setRange(t *[256]attr, a attr, lo, hi int) {
	for op := lo; op <= hi; op++ {
		t[op] |= a
	}
}

func cls(c Class) attr { return attr(c) << classShift }

func init() {
	prefixKind[0xF0] = pLock
	for _, b := range []int{0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65} {
		prefixKind[b] = pOther
	}
	prefixKind[0x66] = p66
	prefixKind[0x67] = p67
	prefixKind[0xF2] = pF2
	prefixKind[0xF3] = pF3
	for b := 0x40; b <= 0x4F; b++ {
		prefixKind[b] = pREX
	}

	for m := 0; m < 256; m++ {
		mod, rm := m>>6, m&7
		var d32, d16 uint8
		switch mod {
		case 0:
			if rm == 5 {
				d32 = 4
			}
			if rm == 6 {
				d16 = 2
			}
		case 1:
			d32, d16 = 1, 1
		case 2:
			d32, d16 = 4, 2
		}
		if mod != 3 && rm == 4 {
			d32 |= sibFlag
			if mod == 0 {
				d32 |= sibMod0
			}
		}
		modrmTab[m], modrmTab[256+m] = d32, d16
		f := uint16(1 + d32&0xF)
		if d32&sibFlag != 0 {
			f++
		}
		if d32&sibMod0 != 0 {
			f |= 0xFF00
		}
		modrmFast[m] = f
	}
	for b := 0; b < 256; b++ {
		if b&7 == 5 {
			sibBase5[b] = 4
		}
		switch prefixKind[b] {
		case pNone:
		case pREX:
			fastPrefix[1][b] = fpREX
		case p66:
			fastPrefix[0][b], fastPrefix[1][b] = fp66, fp66
		case p67:
			fastPrefix[0][b], fastPrefix[1][b] = fpSlow, fpSlow
		default:
			fastPrefix[0][b], fastPrefix[1][b] = fpLegacy, fpLegacy
		}
	}
	for mode := Mode16; mode <= Mode64; mode++ {
		for pf := 0; pf < 8; pf++ {
			osz, asz, w := pf&pfOSZ != 0, pf&pfASZ != 0, pf&pfW != 0
			var os, as uint8
			switch mode {
			case Mode16, Mode32:
				os, as = osz32, 0
				if osz != (mode == Mode16) {
					os = osz16
				}
				if asz != (mode == Mode16) {
					as = szAddr16
				}
			case Mode64:
				os, as = osz32, szAddr64
				if w {
					os = osz64
				} else if osz {
					os = osz16in64
				}
				if asz {
					as = 0
				}
			}
			sizeIdx[uint(mode)<<3|uint(pf)] = os | as
		}
	}
	for sz := 0; sz < 16; sz++ {
		os, as := sz&3, sz&12
		if os == osz16 {
			opFlags[sz] = FlagOpSize16
		}
		set := func(kind int, n uint8) { immSize[kind<<4|sz] = n }
		set(immB, 1)
		set(immW, 2)
		set(immEnter, 3)
		switch os {
		case osz16, osz16in64:
			set(immZ, 2)
			set(immV, 2)
			set(immPtr, 4)
		case osz32:
			set(immZ, 4)
			set(immV, 4)
			set(immPtr, 6)
		case osz64:
			set(immZ, 4)
			set(immV, 8)
			set(immPtr, 6)
		}
		set(immRelZ, 4)
		if os == osz16 {
			set(immRelZ, 2)
		}
		switch as {
		case szAddr16:
			set(immMoffs, 2)
		case szAddr64:
			set(immMoffs, 8)
		default:
			set(immMoffs, 4)
		}
	}

	// One-byte map.
	t := &map0
	for base := 0x00; base <= 0x38; base += 8 { // add, or, adc, sbb, and, sub, xor, cmp
		setRange(t, aModRM, base, base+3)
		set(t, immB, base+4)
		set(t, immZ, base+5)
	}
	set(t, aInv64, 0x06, 0x07, 0x0E, 0x16, 0x17, 0x1E, 0x1F, 0x27, 0x2F, 0x37, 0x3F,
		0x60, 0x61, 0x82, 0x9A, 0xCE, 0xD4, 0xD5, 0xD6, 0xEA)
	set(t, aEsc, 0x0F, 0x62, 0x8F, 0xC4, 0xC5)
	set(t, aModRM, 0x63, 0x69, 0x6B, 0xC0, 0xC1, 0xC6, 0xC7, 0xF6, 0xF7, 0xFE, 0xFF)
	setRange(t, aModRM, 0x80, 0x8F)
	setRange(t, aModRM, 0xD0, 0xD3)
	setRange(t, aModRM, 0xD8, 0xDF)
	set(t, immZ, 0x68, 0x69, 0x81, 0xA9, 0xC7)
	set(t, immRelZ, 0xE8, 0xE9)
	set(t, immB, 0x6A, 0x6B, 0x80, 0x82, 0x83, 0xA8, 0xC0, 0xC1, 0xC6, 0xCD, 0xD4, 0xD5, 0xEB)
	setRange(t, immB, 0x70, 0x7F)
	setRange(t, immB, 0xB0, 0xB7)
	setRange(t, immB, 0xE0, 0xE7)
	setRange(t, immV, 0xB8, 0xBF)
	setRange(t, immMoffs, 0xA0, 0xA3)
	set(t, immW, 0xC2, 0xCA)
	set(t, immEnter, 0xC8)
	set(t, immPtr, 0x9A, 0xEA)
	set(t, aSpecial, 0xF6, 0xF7, 0xFF)
	setRange(t, aRel|cls(CondJump), 0x70, 0x7F)
	setRange(t, aRel|cls(CondJump), 0xE0, 0xE3)
	set(t, aRel|cls(CallDirect), 0xE8)
	set(t, aRel|cls(JumpDirect), 0xE9, 0xEB)
	set(t, cls(CallFar), 0x9A)
	set(t, cls(JumpFar), 0xEA)
	set(t, cls(Return), 0xC2, 0xC3)
	set(t, cls(ReturnFar), 0xCA, 0xCB)
	set(t, cls(Int), 0xCC, 0xCD, 0xCE, 0xF1)
	set(t, cls(Iret), 0xCF)

	// Two-byte map (0F xx).
	t = &map0F
	setRange(t, aModRM, 0x00, 0xFF)
	for _, op := range []int{0x05, 0x06, 0x07, 0x08, 0x09, 0x0B, 0x0E, 0x77,
		0xA0, 0xA1, 0xA2, 0xA8, 0xA9, 0xAA} {
		t[op] &^= aModRM
	}
	for op := 0x30; op <= 0x37; op++ {
		t[op] &^= aModRM
	}
	for op := 0x80; op <= 0x8F; op++ {
		t[op] &^= aModRM
	}
	for op := 0xC8; op <= 0xCF; op++ {
		t[op] &^= aModRM
	}
	for _, op := range []int{0x04, 0x0A, 0x0C, 0x25, 0x27, 0x36, 0x39, 0x3B, 0x3C, 0x3D,
		0x3E, 0x3F, 0x7A, 0x7B} {
		t[op] = aInvalid
	}
	set(t, aInv64, 0x24, 0x26)
	set(t, aRegOnly, 0x20, 0x21, 0x22, 0x23, 0x24, 0x26)
	set(t, aEsc, 0x0F, 0x38, 0x3A)
	setRange(t, immB, 0x70, 0x73)
	set(t, immB, 0xA4, 0xAC, 0xBA, 0xC2, 0xC4, 0xC5, 0xC6)
	setRange(t, immRelZ|aRel|cls(CondJump), 0x80, 0x8F)
	set(t, cls(Syscall), 0x05)
	set(t, cls(Sysret), 0x07)
	set(t, cls(Sysenter), 0x34)
	set(t, cls(Sysexit), 0x35)
	set(t, aSpecial, 0x01, 0x22, 0x78, 0xAE, 0xC7)
	setRange(t, aVexIB, 0x70, 0x73)
	set(t, aVexIB, 0xC2, 0xC4, 0xC5, 0xC6)
	set(t, aVexNoRM, 0x77)
}

// buildFast builds the fast path's tables (fastAttr, fastCtx) from the
// ones above. They are Go literals in lenclass_tables.go, written by
// TestLenClassTables: building them at init cost every iotap process.
func buildFast(fastAttr *[512]uint64, fastCtx *[8]uint8) {
	// operand-size contexts: 0 osz16, 1 osz32, 2 osz64, 3 osz16in64
	ctxSize := [4]uint8{osz16, osz32, osz64 | szAddr64, osz16in64 | szAddr64}
	for e, t := range []*[256]attr{&map0, &map0F} {
		for op := 0; op < 256; op++ {
			a := t[op]
			var f uint64
			if a&(aEsc|aInvalid|aRegOnly|aSpecial) != 0 || a&immMask == immMoffs {
				f |= fastSlowAlways
			}
			if a&aInv64 != 0 {
				f |= fastSlow64
			}
			if a&aModRM != 0 {
				f |= 1 << fastRMShift
			}
			if a&aRel != 0 {
				f |= 1 << fastRelShift
			}
			f |= uint64(a>>classShift&0xFF) << fastClassShift
			for c, sz := range ctxSize {
				f |= uint64(immSize[uint(a&immMask)<<4|uint(sz)]) << (fastImmShift + 4*c)
			}
			fastAttr[e<<8|op] = f
		}
	}
	for m := 0; m < 2; m++ {
		for osz := 0; osz < 2; osz++ {
			for w := 0; w < 2; w++ {
				c := 1 - osz // Mode32
				if m == 1 {  // Mode64
					c = 1 + 2*osz
					if w == 1 {
						c = 2
					}
				}
				fastCtx[m<<2|osz<<1|w] = uint8(fastImmShift + 4*c)
			}
		}
	}
}
