package x86

import "errors"

// Mode is the processor's code size: it sets the default operand and
// address sizes and which encodings exist (REX, the 64-bit-only meaning of
// 0x62, 0xC4 and 0xC5).
type Mode uint8

// Modes. The zero Mode is invalid.
const (
	Mode16 Mode = 1 // real mode, virtual-8086 and 16-bit protected mode
	Mode32 Mode = 2 // 32-bit protected mode and compatibility mode with CS.D=1
	Mode64 Mode = 3 // 64-bit mode (CS.L=1)
)

func (m Mode) String() string {
	switch m {
	case Mode16:
		return "16-bit"
	case Mode32:
		return "32-bit"
	case Mode64:
		return "64-bit"
	}
	return "invalid mode"
}

// Class is what Intel PT (and libipt's instruction classifier) needs to know
// about an instruction's effect on control flow.
type Class uint8

// Classes. They follow libipt's pt_insn_class/iclass split: Other for
// everything that falls through to the next instruction and that PT does not
// treat specially; one class per kind of branch; one class per instruction
// that changes PT's view of the machine (mode, paging, VMCS, PTWRITE).
const (
	Other        Class = iota // not a branch, nothing PT treats specially
	CondJump                  // jcc rel8/rel16/rel32, jrcxz/jecxz/jcxz, loop/loope/loopne (direct, conditional)
	JumpDirect                // jmp rel8 / rel16 / rel32 (EB, E9)
	JumpIndirect              // jmp r/m (FF /4)
	JumpFar                   // jmp ptr16:16/32 (EA), jmp m16:xx (FF /5)
	CallDirect                // call rel (E8)
	CallIndirect              // call r/m (FF /2)
	CallFar                   // call ptr (9A), call m16:xx (FF /3)
	Return                    // ret (C3), ret imm16 (C2)
	ReturnFar                 // retf (CB), retf imm16 (CA)
	Int                       // int imm8 (CD), int3 (CC), into (CE), int1/icebp (F1)
	Iret                      // iret/iretd/iretq (CF)
	Syscall                   // syscall (0F 05)
	Sysret                    // sysret (0F 07)
	Sysenter                  // sysenter (0F 34)
	Sysexit                   // sysexit (0F 35)
	Vmlaunch                  // vmlaunch (0F 01 C2)
	Vmresume                  // vmresume (0F 01 C3)
	Vmcall                    // vmcall (0F 01 C1)
	Vmptrld                   // vmptrld m64 (0F C7 /6, memory form, no 66/F3 prefix)
	MovCR3                    // mov cr3, reg (0F 22 with ModRM.reg = 3)
	Ptwrite                   // ptwrite r/m (F3 [REX] 0F AE /4)
	Uiret                     // uiret (F3 0F 01 EC)
	numClasses
)

var classNames = [numClasses]string{
	"other", "jcc", "jmp", "jmp-indirect", "jmp-far", "call", "call-indirect",
	"call-far", "ret", "ret-far", "int", "iret", "syscall", "sysret", "sysenter",
	"sysexit", "vmlaunch", "vmresume", "vmcall", "vmptrld", "mov-cr3",
	"ptwrite", "uiret",
}

func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "invalid class"
}

// IsBranch reports whether instructions of class c may transfer control
// somewhere else than the next instruction (every class except Other,
// Vmptrld, MovCR3 and Ptwrite).
func (c Class) IsBranch() bool {
	switch c {
	case Other, Vmptrld, MovCR3, Ptwrite:
		return false
	}
	return c < numClasses
}

// IsDirect reports whether c is a branch whose target is encoded in the
// instruction as a displacement (Inst.Disp is valid): CondJump, JumpDirect,
// CallDirect.
func (c Class) IsDirect() bool {
	return c == CondJump || c == JumpDirect || c == CallDirect
}

// IsFar reports whether c changes CS (far branches, interrupts, system calls,
// VM entries/exits): after such an instruction PT may report a mode change.
func (c Class) IsFar() bool {
	switch c {
	case JumpFar, CallFar, ReturnFar, Int, Iret, Syscall, Sysret, Sysenter,
		Sysexit, Vmlaunch, Vmresume, Vmcall, Uiret:
		return true
	}
	return false
}

// Encoding says how the opcode was encoded.
type Encoding uint8

// Encodings.
const (
	Legacy Encoding = iota // legacy/REX encoding (maps 0F, 0F38, 0F3A through escape bytes)
	VEX                    // C4/C5 prefix
	EVEX                   // 62 prefix (AVX-512 and later)
	XOP                    // 8F prefix (AMD XOP)
	Now3D                  // 0F 0F (AMD 3DNow!), Opcode is the suffix byte
)

// Opcode maps (Inst.Map).
const (
	Map0    = 0 // one-byte opcodes
	Map0F   = 1 // 0F xx
	Map0F38 = 2 // 0F 38 xx
	Map0F3A = 3 // 0F 3A xx
	// EVEX maps 5 and 6 and XOP maps 8, 9 and 10 keep their numbers.
)

// Inst flags (Inst.Flags).
const (
	// FlagOpSize16: the operand size is 16 bits in 16- or 32-bit mode; a
	// relative branch's target is truncated to 16 bits (IP = (IP + len +
	// disp) & 0xFFFF). (In 64-bit mode a near branch ignores 66, and the
	// flag is never set.)
	FlagOpSize16 = 1 << iota
	// FlagWrap32: decoded in 16- or 32-bit mode; a relative branch's target
	// wraps at 32 bits (EIP).
	FlagWrap32
	// FlagModRM: Inst.ModRM is valid.
	FlagModRM
)

// Inst is one decoded instruction. Decode fills every field.
type Inst struct {
	Len      uint8    // 1..15
	Class    Class    // branch class
	Map      uint8    // opcode map (Map0, Map0F, ...)
	Opcode   uint8    // opcode byte within Map
	ModRM    uint8    // ModRM byte when Flags&FlagModRM is set
	Encoding Encoding // legacy, VEX, EVEX, XOP, 3DNow!
	Flags    uint8    // FlagOpSize16, FlagWrap32, FlagModRM
	// Disp is, for CondJump, JumpDirect and CallDirect, the signed
	// displacement relative to the next instruction; 0 otherwise.
	Disp int32
}

// Target returns the target of a direct branch (Class.IsDirect) at ip:
// ip + Len + Disp, truncated to 16 bits when the operand size is 16 and to
// 32 bits outside 64-bit mode.
func (in *Inst) Target(ip uint64) uint64 {
	t := ip + uint64(in.Len) + uint64(int64(in.Disp))
	switch {
	case in.Flags&FlagOpSize16 != 0:
		t &= 0xffff
	case in.Flags&FlagWrap32 != 0:
		t &= 0xffffffff
	}
	return t
}

// Errors. Decode returns them unwrapped so that a caller on a hot path can
// compare with ==; errors.Is works too.
var (
	// ErrTruncated: code ends before the instruction does.
	ErrTruncated = errors.New("x86: truncated instruction")
	// ErrInvalid: the bytes are not a valid instruction in this mode (or
	// the instruction would be longer than 15 bytes), or the mode is invalid.
	ErrInvalid = errors.New("x86: invalid instruction")
)

// MaxLen is the longest valid instruction.
const MaxLen = 15
