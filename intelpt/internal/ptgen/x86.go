package ptgen

import "math/rand/v2"

// Encodings of the instructions the generator writes. Every encoding here is
// built from the Intel SDM opcode tables (volume 2, appendix A) by hand, not
// by an assembler, so the generator knows each instruction's length and
// class independently of any decoder under test. The test compares the
// image against GNU objdump's instruction boundaries.

// Class is the encoding family of a generated instruction, for statistics.
type Class uint8

// Encoding families.
const (
	ClassLegacy Class = iota // one-byte and 0F opcodes without REX
	ClassREX                 // with a REX prefix
	ClassSSE                 // 0F opcodes with a mandatory 66/F2/F3 prefix
	Class0F38                // three-byte opcode map 0F 38
	Class0F3A                // three-byte opcode map 0F 3A (with imm8)
	ClassX87                 // D8-DF escapes
	ClassVEX2                // C5 prefix
	ClassVEX3                // C4 prefix
	ClassEVEX                // 62 prefix (AVX-512)
	ClassBranch              // a branch (see Kind)
	numClasses
)

var classNames = [numClasses]string{"legacy", "rex", "sse", "0f38", "0f3a", "x87", "vex2", "vex3", "evex", "branch"}

func (c Class) String() string { return classNames[c] }

// Kind is what the CPU does with an instruction in the trace.
type Kind uint8

// Instruction kinds.
const (
	KindOther    Kind = iota // not a branch
	KindJcc                  // conditional branch (jcc, loop, jrcxz): one TNT bit
	KindJmp                  // direct near jmp: no packet
	KindCall                 // direct near call: no packet; pushed on the return stack
	KindCallNext             // call to the next instruction (call; pop): not pushed
	KindRet                  // near ret: a TNT bit when compressed, else a TIP
	KindJmpInd               // indirect near jmp: TIP
	KindCallInd              // indirect near call: TIP; pushed on the return stack
	KindSyscall              // syscall (a far call): TIP.PGD when only user code is traced, else TIP
	KindFarRet               // sysretq, iretq: TIP
	KindPTWrite              // ptwrite: PTW (and FUP)
	numKinds
)

var kindNames = [numKinds]string{"other", "jcc", "jmp", "call", "call-next", "ret", "jmp-ind", "call-ind", "syscall", "far-ret", "ptwrite"}

func (k Kind) String() string { return kindNames[k] }

// ModRM operand forms.
const (
	formAny = iota
	formMem
	formReg
)

// Immediate sizes.
const (
	immNone = iota
	imm8
	imm16
	immZ     // 16 bits with 66 (and no REX.W), else 32
	immV     // B8+r: 16 with 66, 64 with REX.W, else 32
	immMoffs // A0-A3: 64-bit address, 32-bit with 67
	immEnter // iw ib
)

// legacyOp is a one-byte, 0F, 0F38 or 0F3A opcode.
type legacyOp struct {
	pfx   byte   // mandatory prefix 66/F2/F3, or 0
	op    []byte // opcode bytes (one of them chosen by ops)
	ops   []byte // alternative last opcode bytes; empty: op as is
	modrm bool
	digit uint8 // allowed /digit values as a bit mask; 0: /r (any)
	form  uint8
	imm   uint8
	plusR bool // the register is in the low 3 bits of the last opcode byte
	no66  bool // a 66 prefix would change the instruction
	rep   bool // string instruction: F2/F3 allowed
	class Class
}

func seq(from, to byte) []byte {
	var b []byte
	for x := from; x <= to; x++ {
		b = append(b, x)
	}
	return b
}

var legacyOps = []legacyOp{
	{op: []byte{0x00}, ops: []byte{0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x18, 0x19, 0x1a, 0x1b, 0x20, 0x21, 0x22, 0x23, 0x28, 0x29, 0x2a, 0x2b, 0x30, 0x31, 0x32, 0x33, 0x38, 0x39, 0x3a, 0x3b, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b}, modrm: true},
	{op: []byte{0x8d}, modrm: true, form: formMem},
	{op: []byte{0x63}, modrm: true},
	{op: []byte{0x80}, modrm: true, imm: imm8},
	{op: []byte{0x81}, modrm: true, imm: immZ},
	{op: []byte{0x83}, modrm: true, imm: imm8},
	{op: []byte{0xc0}, ops: []byte{0xc0, 0xc1}, modrm: true, digit: 0xbf, imm: imm8},
	{op: []byte{0xd0}, ops: []byte{0xd0, 0xd1, 0xd2, 0xd3}, modrm: true, digit: 0xbf},
	{op: []byte{0xf6}, modrm: true, digit: 0x01, imm: imm8},
	{op: []byte{0xf7}, modrm: true, digit: 0x01, imm: immZ},
	{op: []byte{0xf6}, ops: []byte{0xf6, 0xf7}, modrm: true, digit: 0xfc},
	{op: []byte{0xfe}, ops: []byte{0xfe, 0xff}, modrm: true, digit: 0x03},
	{op: []byte{0xff}, modrm: true, digit: 0x40}, // push r/m
	{op: []byte{0x8f}, modrm: true, digit: 0x01}, // pop r/m
	{op: []byte{0xc6}, modrm: true, digit: 0x01, imm: imm8},
	{op: []byte{0xc7}, modrm: true, digit: 0x01, imm: immZ},
	{op: []byte{0x69}, modrm: true, imm: immZ},
	{op: []byte{0x6b}, modrm: true, imm: imm8},
	{op: []byte{0x04}, ops: []byte{0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c, 0xa8}, imm: imm8},
	{op: []byte{0x05}, ops: []byte{0x05, 0x0d, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0xa9}, imm: immZ},
	{op: []byte{0x90}, ops: []byte{0x90, 0x98, 0x99, 0x9c, 0x9d, 0x9e, 0x9f, 0xc9, 0xf5, 0xf8, 0xf9, 0xfc, 0xfd}},
	{op: []byte{0x50}, plusR: true},
	{op: []byte{0x58}, plusR: true},
	{op: []byte{0xb0}, plusR: true, imm: imm8},
	{op: []byte{0xb8}, plusR: true, imm: immV},
	{op: []byte{0x6a}, imm: imm8},
	{op: []byte{0x68}, imm: immZ},
	{op: []byte{0xa0}, ops: []byte{0xa0, 0xa1, 0xa2, 0xa3}, imm: immMoffs},
	{op: []byte{0xc8}, imm: immEnter, no66: true},
	{op: []byte{0xa4}, ops: []byte{0xa4, 0xa5, 0xaa, 0xab, 0xac, 0xad}, rep: true},
	{op: []byte{0x0f, 0xaf}, modrm: true},
	{op: []byte{0x0f, 0xb6}, ops: []byte{0xb6, 0xb7, 0xbe, 0xbf, 0xa3, 0xab, 0xb3, 0xbb, 0xa5, 0xad, 0xc0, 0xc1, 0xb0, 0xb1, 0xbc, 0xbd}, modrm: true},
	{op: []byte{0x0f, 0x40}, ops: seq(0x40, 0x4f), modrm: true},
	{op: []byte{0x0f, 0x90}, ops: seq(0x90, 0x9f), modrm: true, digit: 0x01},
	{op: []byte{0x0f, 0xba}, modrm: true, digit: 0xf0, imm: imm8},
	{op: []byte{0x0f, 0xa4}, ops: []byte{0xa4, 0xac}, modrm: true, imm: imm8},
	{op: []byte{0x0f, 0x1f}, modrm: true, digit: 0x01},
	{op: []byte{0x0f, 0x18}, modrm: true, digit: 0x02, form: formMem},
	{op: []byte{0x0f, 0xc8}, plusR: true, no66: true},
	{op: []byte{0x0f, 0x31}, no66: true},
	{op: []byte{0x0f, 0x6f}, ops: []byte{0x6f, 0xef, 0xfe, 0xd4}, modrm: true, no66: true},
	{op: []byte{0x0f, 0x10}, ops: []byte{0x10, 0x11, 0x28, 0x29, 0x58, 0x59, 0x5c, 0x5e, 0x54, 0x57, 0x14}, modrm: true, no66: true},
	{op: []byte{0x0f, 0xc6}, modrm: true, imm: imm8, no66: true},
	{pfx: 0xf3, op: []byte{0x0f, 0xb8}, ops: []byte{0xb8, 0xbc, 0xbd}, modrm: true, class: ClassSSE},
	{pfx: 0x66, op: []byte{0x0f, 0x6f}, ops: []byte{0x6f, 0x7f, 0xef, 0xfe, 0xd4, 0x74, 0x60, 0x61, 0x62, 0x28, 0x58}, modrm: true, class: ClassSSE},
	{pfx: 0x66, op: []byte{0x0f, 0xd7}, modrm: true, form: formReg, class: ClassSSE},
	{pfx: 0xf3, op: []byte{0x0f, 0x6f}, ops: []byte{0x6f, 0x7f, 0x10, 0x11, 0x58, 0x2c}, modrm: true, class: ClassSSE},
	{pfx: 0xf2, op: []byte{0x0f, 0x10}, ops: []byte{0x10, 0x11, 0x58, 0x59, 0x2a}, modrm: true, class: ClassSSE},
	{pfx: 0x66, op: []byte{0x0f, 0x70}, modrm: true, imm: imm8, class: ClassSSE},
	{pfx: 0xf3, op: []byte{0x0f, 0x70}, modrm: true, imm: imm8, class: ClassSSE},
	{pfx: 0xf2, op: []byte{0x0f, 0x70}, modrm: true, imm: imm8, class: ClassSSE},
	{pfx: 0x66, op: []byte{0x0f, 0x73}, modrm: true, digit: 0xcc, form: formReg, imm: imm8, class: ClassSSE},
	{pfx: 0xf3, op: []byte{0x0f, 0x1e, 0xfa}, class: ClassSSE}, // endbr64
	{pfx: 0x66, op: []byte{0x0f, 0x38, 0x00}, ops: []byte{0x00, 0x01, 0x04, 0x0b, 0x17, 0x1c, 0x1d, 0x1e, 0x28, 0x29, 0x2b, 0x30, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0xdb, 0xdc, 0xdd, 0xde, 0xdf}, modrm: true, class: Class0F38},
	{op: []byte{0x0f, 0x38, 0x00}, ops: []byte{0x00, 0x04, 0x0b, 0x1c}, modrm: true, no66: true, class: Class0F38},
	{pfx: 0xf2, op: []byte{0x0f, 0x38, 0xf0}, ops: []byte{0xf0, 0xf1}, modrm: true, class: Class0F38},
	{op: []byte{0x0f, 0x38, 0xf0}, ops: []byte{0xf0, 0xf1}, modrm: true, form: formMem, class: Class0F38},
	{pfx: 0x66, op: []byte{0x0f, 0x38, 0xf6}, modrm: true, class: Class0F38},
	{pfx: 0xf3, op: []byte{0x0f, 0x38, 0xf6}, modrm: true, class: Class0F38},
	{pfx: 0x66, op: []byte{0x0f, 0x3a, 0x08}, ops: []byte{0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x14, 0x15, 0x16, 0x17, 0x20, 0x21, 0x22, 0x40, 0x41, 0x42, 0x44, 0x60, 0x61, 0x62, 0x63, 0xdf}, modrm: true, imm: imm8, class: Class0F3A},
	{op: []byte{0x0f, 0x3a, 0x0f}, ops: []byte{0x0f, 0xcc}, modrm: true, imm: imm8, no66: true, class: Class0F3A},
	{op: []byte{0xd8}, modrm: true, class: ClassX87},
	{op: []byte{0xdc}, modrm: true, digit: 0xf3, class: ClassX87}, // not DC D0-DF (reserved aliases)
	{op: []byte{0xd9}, modrm: true, digit: 0x01, form: formMem, class: ClassX87},
	{op: []byte{0xdd}, modrm: true, digit: 0x0d, form: formMem, class: ClassX87},
	{op: []byte{0xde}, modrm: true, digit: 0x01, form: formReg, class: ClassX87},
	{op: []byte{0xd9, 0xe8}, ops: []byte{0xe8, 0xe9, 0xee, 0xe0, 0xe1}, no66: true, class: ClassX87},
}

// vexOp is a VEX or EVEX encoded opcode.
type vexOp struct {
	mmmmm byte // opcode map: 1 0F, 2 0F38, 3 0F3A
	pp    byte // implied prefix: 0 none, 1 66, 2 F3, 3 F2
	op    byte
	form  uint8
	digit uint8 // /digit mask; 0: /r
	imm   bool
	nds   bool // vvvv names a source register (else it must be 1111)
	w     int8 // -1: any (WIG)
	l     int8 // vector length: -1 any, else 0, 1 (VEX) or 0..2 (EVEX)
	lmin  int8 // smallest allowed length when l == -1
	none  bool // no ModRM byte (vzeroupper)
}

var vexOps = []vexOp{
	{mmmmm: 1, pp: 0, op: 0x10, w: -1, l: -1},
	{mmmmm: 1, pp: 0, op: 0x28, w: -1, l: -1},
	{mmmmm: 1, pp: 0, op: 0x58, nds: true, w: -1, l: -1},
	{mmmmm: 1, pp: 0, op: 0x57, nds: true, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0x6f, w: -1, l: -1},
	{mmmmm: 1, pp: 2, op: 0x7f, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0xef, nds: true, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0xfe, nds: true, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0x70, imm: true, w: -1, l: -1},
	{mmmmm: 1, pp: 0, op: 0xc6, imm: true, nds: true, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0xd7, form: formReg, w: -1, l: -1},
	{mmmmm: 1, pp: 0, op: 0x77, none: true, w: -1, l: -1}, // vzeroupper / vzeroall
	{mmmmm: 2, pp: 1, op: 0x00, nds: true, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x18, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x58, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x36, nds: true, w: 0, l: 1},
	{mmmmm: 2, pp: 1, op: 0x40, nds: true, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x47, nds: true, w: -1, l: -1},
	{mmmmm: 2, pp: 0, op: 0xf2, nds: true, w: -1, l: 0}, // andn
	{mmmmm: 2, pp: 0, op: 0xf5, nds: true, w: -1, l: 0}, // bzhi
	{mmmmm: 2, pp: 3, op: 0xf5, nds: true, w: -1, l: 0}, // pdep
	{mmmmm: 2, pp: 1, op: 0xf7, nds: true, w: -1, l: 0}, // shlx
	{mmmmm: 2, pp: 3, op: 0xf6, nds: true, w: -1, l: 0}, // mulx
	{mmmmm: 3, pp: 1, op: 0x0f, imm: true, nds: true, w: -1, l: -1},
	{mmmmm: 3, pp: 1, op: 0x16, imm: true, w: 0, l: 0},
	{mmmmm: 3, pp: 1, op: 0x38, imm: true, nds: true, w: 0, l: 1},
	{mmmmm: 3, pp: 1, op: 0x46, imm: true, nds: true, w: 0, l: 1},
	{mmmmm: 3, pp: 1, op: 0x44, imm: true, nds: true, w: -1, l: 0},
	{mmmmm: 3, pp: 1, op: 0x4a, imm: true, nds: true, w: 0, l: -1},
	{mmmmm: 3, pp: 3, op: 0xf0, imm: true, w: -1, l: 0}, // rorx
}

var evexOps = []vexOp{
	{mmmmm: 1, pp: 0, op: 0x10, w: 0, l: -1},
	{mmmmm: 1, pp: 0, op: 0x28, w: 0, l: -1},
	{mmmmm: 1, pp: 1, op: 0x28, w: 1, l: -1},
	{mmmmm: 1, pp: 0, op: 0x58, nds: true, w: 0, l: -1},
	{mmmmm: 1, pp: 1, op: 0x59, nds: true, w: 1, l: -1},
	{mmmmm: 1, pp: 1, op: 0x6f, w: -1, l: -1},
	{mmmmm: 1, pp: 2, op: 0x6f, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0x7f, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0xef, nds: true, w: -1, l: -1},
	{mmmmm: 1, pp: 1, op: 0xfe, nds: true, w: 0, l: -1},
	{mmmmm: 1, pp: 1, op: 0xd4, nds: true, w: 1, l: -1},
	{mmmmm: 1, pp: 1, op: 0x70, imm: true, w: 0, l: -1},
	{mmmmm: 1, pp: 0, op: 0xc6, imm: true, nds: true, w: 0, l: -1},
	{mmmmm: 1, pp: 1, op: 0x72, digit: 0x54, form: formReg, imm: true, nds: true, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x00, nds: true, w: -1, l: -1},
	{mmmmm: 2, pp: 1, op: 0x18, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x58, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x40, nds: true, w: 0, l: -1},
	{mmmmm: 2, pp: 1, op: 0x36, nds: true, w: 0, l: -1, lmin: 1},
	{mmmmm: 3, pp: 1, op: 0x25, imm: true, nds: true, w: 0, l: -1},
	{mmmmm: 3, pp: 1, op: 0x0f, imm: true, nds: true, w: -1, l: -1},
	{mmmmm: 3, pp: 1, op: 0x00, imm: true, w: 1, l: -1, lmin: 1},
}

var segPrefixes = []byte{0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65}

func appendRand(r *rand.Rand, dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, byte(r.Uint32()))
	}
	return dst
}

// pickDigit returns a random /digit allowed by mask (0: any).
func pickDigit(r *rand.Rand, mask uint8) byte {
	for {
		d := byte(r.IntN(8))
		if mask == 0 || mask&(1<<d) != 0 {
			return d
		}
	}
}

// appendModRM appends a ModRM byte with the given reg field and a random
// r/m operand of the form (register, or memory with SIB, disp8, disp32 or
// RIP-relative).
func appendModRM(r *rand.Rand, dst []byte, reg byte, form uint8) []byte {
	var mod byte
	switch form {
	case formMem:
		mod = byte(r.IntN(3))
	case formReg:
		mod = 3
	default:
		mod = byte(r.IntN(4))
	}
	rm := byte(r.IntN(8))
	dst = append(dst, mod<<6|(reg&7)<<3|rm)
	if mod == 3 {
		return dst
	}
	if rm == 4 {
		base := byte(r.IntN(8))
		dst = append(dst, byte(r.IntN(4))<<6|byte(r.IntN(8))<<3|base)
		if mod == 0 && base == 5 {
			dst = appendRand(r, dst, 4)
		}
	}
	switch {
	case mod == 0 && rm == 5:
		dst = appendRand(r, dst, 4) // RIP-relative
	case mod == 1:
		dst = appendRand(r, dst, 1)
	case mod == 2:
		dst = appendRand(r, dst, 4)
	}
	return dst
}

// appendOther appends one random non-branch instruction.
func appendOther(r *rand.Rand, dst []byte) ([]byte, Class) {
	switch n := r.IntN(100); {
	case n < 8:
		return appendVEX(r, dst, false), ClassVEX2
	case n < 16:
		return appendVEX(r, dst, true), ClassVEX3
	case n < 24:
		return appendEVEX(r, dst), ClassEVEX
	}
	return appendLegacy(r, dst, &legacyOps[r.IntN(len(legacyOps))])
}

func appendLegacy(r *rand.Rand, dst []byte, o *legacyOp) ([]byte, Class) {
	class := o.class
	// Legacy prefixes: segment overrides, address size, operand size.
	has66, has67 := false, false
	for i := r.IntN(4) - 1; i > 0; i-- {
		switch r.IntN(4) {
		case 0:
			if !has67 {
				dst, has67 = append(dst, 0x67), true
			}
		case 1:
			if !has66 && !o.no66 && o.pfx == 0 {
				dst, has66 = append(dst, 0x66), true
			}
		default:
			dst = append(dst, segPrefixes[r.IntN(len(segPrefixes))])
		}
	}
	if o.rep && r.IntN(2) == 0 {
		dst = append(dst, 0xf3)
	}
	if o.pfx != 0 {
		dst = append(dst, o.pfx)
	}
	var rex byte
	if r.IntN(3) == 0 {
		rex = 0x40 | byte(r.IntN(16))
		dst = append(dst, rex)
		if class == ClassLegacy {
			class = ClassREX
		}
	}
	dst = append(dst, o.op...)
	if len(o.ops) > 0 {
		dst[len(dst)-1] = o.ops[r.IntN(len(o.ops))]
	}
	if o.plusR {
		dst[len(dst)-1] += byte(r.IntN(8))
	}
	if o.modrm {
		dst = appendModRM(r, dst, pickDigit(r, o.digit), o.form)
	}
	rexW := rex&8 != 0
	switch o.imm {
	case imm8:
		dst = appendRand(r, dst, 1)
	case imm16:
		dst = appendRand(r, dst, 2)
	case immZ:
		if has66 && !rexW {
			dst = appendRand(r, dst, 2)
		} else {
			dst = appendRand(r, dst, 4)
		}
	case immV:
		switch {
		case rexW:
			dst = appendRand(r, dst, 8)
		case has66:
			dst = appendRand(r, dst, 2)
		default:
			dst = appendRand(r, dst, 4)
		}
	case immMoffs:
		if has67 {
			dst = appendRand(r, dst, 4)
		} else {
			dst = appendRand(r, dst, 8)
		}
	case immEnter:
		dst = appendRand(r, dst, 3)
	}
	return dst, class
}

func pickVexOp(r *rand.Rand, ops []vexOp, vex2 bool) *vexOp {
	for {
		o := &ops[r.IntN(len(ops))]
		if !vex2 || (o.mmmmm == 1 && o.w != 1) {
			return o
		}
	}
}

// appendVEX appends a VEX-encoded instruction (C5 two-byte form, or C4
// three-byte form).
func appendVEX(r *rand.Rand, dst []byte, three bool) []byte {
	o := pickVexOp(r, vexOps, !three)
	if r.IntN(8) == 0 {
		dst = append(dst, segPrefixes[r.IntN(len(segPrefixes))])
	}
	vvvv := byte(0xf)
	if o.nds {
		vvvv = byte(r.IntN(16))
	}
	l := byte(r.IntN(2))
	if o.l >= 0 {
		l = byte(o.l)
	}
	last := vvvv<<3 | l<<2 | o.pp // W (or R) and vvvv are stored inverted
	if three {
		w := byte(r.IntN(2))
		if o.w >= 0 {
			w = byte(o.w)
		}
		dst = append(dst, 0xc4, byte(r.IntN(8))<<5|o.mmmmm, w<<7|last)
	} else {
		dst = append(dst, 0xc5, byte(r.IntN(2))<<7|last)
	}
	dst = append(dst, o.op)
	if !o.none {
		dst = appendModRM(r, dst, pickDigit(r, o.digit), o.form)
	}
	if o.imm {
		dst = appendRand(r, dst, 1)
	}
	return dst
}

// appendEVEX appends an EVEX-encoded (AVX-512) instruction.
func appendEVEX(r *rand.Rand, dst []byte) []byte {
	o := pickVexOp(r, evexOps, false)
	if r.IntN(8) == 0 {
		dst = append(dst, segPrefixes[r.IntN(len(segPrefixes))])
	}
	vvvv := byte(0xf)
	if o.nds {
		vvvv = byte(r.IntN(16))
	}
	w := byte(r.IntN(2))
	if o.w >= 0 {
		w = byte(o.w)
	}
	l := byte(o.lmin) + byte(r.IntN(3-int(o.lmin)))
	if o.l >= 0 {
		l = byte(o.l)
	}
	p0 := byte(r.IntN(16))<<4 | o.mmmmm // R X B R' (inverted), 00, mm
	p1 := w<<7 | vvvv<<3 | 4 | o.pp
	p2 := l<<5 | 8 | byte(r.IntN(8)) // z=0, L'L, b=0, V'=1 (inverted 0), aaa
	dst = append(dst, 0x62, p0, p1, p2, o.op)
	dst = appendModRM(r, dst, pickDigit(r, o.digit), o.form)
	if o.imm {
		dst = appendRand(r, dst, 1)
	}
	return dst
}
