package x86

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
	*in = Inst{}
	if mode-Mode16 > Mode64-Mode16 {
		return ErrInvalid
	}
	n := len(code)
	lim := n
	if lim > MaxLen {
		lim = MaxLen
	}
	var (
		i    int
		osz  bool // 66
		asz  bool // 67
		rep  uint8
		rex  uint8
		mrm  uint8
		lock bool
		flag uint8
	)
	if mode == Mode32 {
		flag = FlagMode32
	}
	var b byte
	for {
		if i >= lim {
			return short(n)
		}
		b = code[i]
		k := prefixKind[b]
		if k == pNone {
			break
		}
		switch k {
		case pREX:
			if mode != Mode64 {
				goto opcode
			}
			rex = b
			i++
			continue
		case p66:
			osz = true
		case p67:
			asz = true
		case pF2, pF3:
			rep = b
		case pLock:
			lock = true
		}
		rex = 0 // a REX prefix counts only right before the opcode
		i++
	}
opcode:
	i++
	op := b
	a := map0[op]
	mp := uint8(Map0)
	enc := Legacy
	if a&aEsc != 0 {
		if op != 0x0F {
			return decodeEsc(code, mode, in, i, op, osz, asz, rex, flag)
		}
		if i >= lim {
			return short(n)
		}
		op = code[i]
		i++
		a = map0F[op]
		mp = Map0F
		if a&aEsc != 0 {
			if i >= lim {
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
			return ErrInvalid
		}
	}

	// Operand size: 16 or not, and 64 (REX.W).
	var os16, os64 bool
	if mode == Mode64 {
		os64 = rex&8 != 0
		os16 = osz && !os64
	} else {
		os16 = osz != (mode == Mode16)
	}

	class := Class(a >> classShift)
	imm := a & immMask
	if a&aModRM != 0 {
		if i >= lim {
			return short(n)
		}
		m := code[i]
		i++
		mrm = m
		flag |= FlagModRM
		if a&aRegOnly != 0 {
			// mov to/from control, debug and test registers
		} else if mode != Mode64 && asz != (mode == Mode16) {
			i += int(modrm16[m])
		} else {
			d := modrm32[m]
			if d&sibFlag != 0 {
				if i >= lim {
					return short(n)
				}
				if code[i]&7 == 5 && m < 0x40 {
					d += 4
				}
				i++
			}
			i += int(d &^ sibFlag)
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
				if reg == 3 && rex&4 == 0 && !lock { // lock mov cr: cr8 on AMD
					class = MovCR3
				}
			case op == 0x78:
				if osz || rep == 0xF2 { // extrq/insertq xmm, imm8, imm8
					imm = immW
				}
			case op == 0xAE:
				if reg == 4 && rep == 0xF3 && !osz {
					class = Ptwrite
				}
			case op == 0xC7:
				if reg == 6 && m < 0xC0 && !osz && rep != 0xF3 {
					class = Vmptrld
				}
			}
		}
	}
	if enc == Now3D {
		if i >= lim {
			return short(n)
		}
		op = code[i]
	}

	var sz int
	switch imm {
	case immNone:
	case immB:
		sz = 1
	case immW:
		sz = 2
	case immZ:
		sz = 4
		if os16 && !(a&aRel != 0 && mode == Mode64) {
			sz = 2
		}
	case immV:
		switch {
		case os64:
			sz = 8
		case os16:
			sz = 2
		default:
			sz = 4
		}
	case immMoffs:
		switch {
		case mode == Mode64:
			sz = 8
			if asz {
				sz = 4
			}
		case asz != (mode == Mode16):
			sz = 2
		default:
			sz = 4
		}
	case immEnter:
		sz = 3
	case immPtr:
		sz = 6
		if os16 {
			sz = 4
		}
	}
	end := i + sz
	if end > lim {
		return short(n)
	}
	if a&aRel != 0 {
		switch sz {
		case 1:
			in.Disp = int32(int8(code[i]))
		case 2:
			in.Disp = int32(int16(uint16(code[i]) | uint16(code[i+1])<<8))
			flag |= FlagOpSize16
		case 4:
			_ = code[i+3]
			in.Disp = int32(uint32(code[i]) | uint32(code[i+1])<<8 | uint32(code[i+2])<<16 | uint32(code[i+3])<<24)
		}
		if os16 && mode != Mode64 {
			flag |= FlagOpSize16
		}
	}
	in.ModRM = mrm
	in.Len = uint8(end)
	in.Class = class
	in.Map = mp
	in.Opcode = op
	in.Encoding = enc
	in.Flags = flag
	return nil
}

// decodeEsc decodes the instructions that start with C4, C5, 62 or 8F:
// VEX, EVEX and XOP encodings, or (outside 64-bit mode, when the next byte
// is a memory ModRM) LES, LDS and BOUND; 8F is POP r/m unless the next byte
// selects an XOP map. i indexes the byte after op.
func decodeEsc(code []byte, mode Mode, in *Inst, i int, op byte, osz, asz bool, rex, flag uint8) error {
	n := len(code)
	lim := n
	if lim > MaxLen {
		lim = MaxLen
	}
	if i >= lim {
		return short(n)
	}
	b1 := code[i]
	var mrm uint8
	legacy := false
	switch op {
	case 0xC4, 0xC5, 0x62:
		legacy = mode != Mode64 && b1 < 0xC0
	case 0x8F:
		legacy = b1&0x1F < 8
	}
	if legacy {
		// LES, LDS, BOUND, POP r/m: ModRM only.
		i++
		mrm = b1
		flag |= FlagModRM
		if mode != Mode64 && asz != (mode == Mode16) {
			i += int(modrm16[b1])
		} else {
			d := modrm32[b1]
			if d&sibFlag != 0 {
				if i >= lim {
					return short(n)
				}
				if code[i]&7 == 5 && b1 < 0x40 {
					d += 4
				}
				i++
			}
			i += int(d &^ sibFlag)
		}
		if i > lim {
			return short(n)
		}
		in.ModRM = mrm
		in.Len = uint8(i)
		in.Opcode = op
		in.Flags = flag
		return nil
	}

	var mp uint8
	var enc Encoding
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
	modrm := true
	sz := 0
	switch mp {
	case Map0F:
		a := map0F[op]
		if a&aVexIB != 0 {
			sz = 1
		}
		if a&aVexNoRM != 0 && enc == VEX {
			modrm = false
		}
	case Map0F3A, 8:
		sz = 1
	case 10:
		sz = 4
	}
	if modrm {
		if i >= lim {
			return short(n)
		}
		m := code[i]
		i++
		mrm = m
		flag |= FlagModRM
		if mode != Mode64 && asz != (mode == Mode16) {
			i += int(modrm16[m])
		} else {
			d := modrm32[m]
			if d&sibFlag != 0 {
				if i >= lim {
					return short(n)
				}
				if code[i]&7 == 5 && m < 0x40 {
					d += 4
				}
				i++
			}
			i += int(d &^ sibFlag)
		}
	}
	i += sz
	if i > lim {
		return short(n)
	}
	_, _ = osz, rex
	in.ModRM = mrm
	in.Len = uint8(i)
	in.Map = mp
	in.Opcode = op
	in.Encoding = enc
	in.Flags = flag
	return nil
}
