package intelpt

import "github.com/iotap/iotap/intelpt/x86"

// InsnClass is how an instruction moves control, as PT decoding sees it
// (libipt's pt_insn_class).
type InsnClass uint8

// Instruction classes.
const (
	ClassUnknown   InsnClass = iota // could not be decoded
	ClassOther                      // falls through to the next instruction
	ClassCall                       // near call (direct or indirect)
	ClassReturn                     // near return
	ClassJump                       // near jump (direct or indirect)
	ClassCondJump                   // conditional jump (jcc, loop, jrcxz)
	ClassFarCall                    // far call, int, syscall, sysenter, vmcall
	ClassFarReturn                  // far return, iret, sysret, sysexit, vmlaunch, vmresume, uiret
	ClassFarJump                    // far jump
	ClassPTWrite                    // ptwrite
)

var classNames = [...]string{"unknown", "other", "call", "return", "jump", "cond_jump", "far_call", "far_return", "far_jump", "ptwrite"}

func (c InsnClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "invalid"
}

// insnKind refines the class for the instructions events bind to.
type insnKind uint8

const (
	ikNone    insnKind = iota
	ikSwInt            // int, int3, into, int1
	ikIret             // iret, sysret, sysexit, erets, eretu
	ikSyscall          // syscall, sysenter
	ikVMEntry          // vmlaunch, vmresume
	ikMovCR3
	ikVMPtrld
	ikUIret
	ikJmpAbs
)

// insnEntry is a decoded instruction as cached per image byte: 8 bytes.
type insnEntry struct {
	size  uint8 // 0: not decoded yet
	class InsnClass
	kind  insnKind
	mode  ExecMode
	disp  int32 // direct branch displacement (0 for indirect)
}

// kindDirect marks a direct branch (disp is valid) in insnEntry.kind.
const kindDirect insnKind = 0x80

func (e *insnEntry) direct() bool { return e.kind == kindDirect }

// insn is an instruction being processed by the block decoder.
type insn struct {
	ip        uint64
	isid      int
	mode      ExecMode
	truncated bool
	raw       [maxInsnSize]byte // only for truncated instructions
	insnEntry
}

func (in *insn) binds2PIP() bool {
	switch in.kind {
	case ikMovCR3, ikVMEntry:
		return true
	}
	return in.isFar()
}

func (in *insn) binds2VMCS() bool {
	switch in.kind {
	case ikVMPtrld, ikVMEntry:
		return true
	}
	return in.isFar()
}

func (in *insn) isFar() bool {
	switch in.class {
	case ClassFarCall, ClassFarReturn, ClassFarJump:
		return true
	}
	return false
}

func (in *insn) isBranch() bool {
	switch in.class {
	case ClassCall, ClassReturn, ClassJump, ClassCondJump, ClassFarCall, ClassFarReturn, ClassFarJump:
		return true
	}
	return false
}

// nextIP returns the IP after in when it does not depend on the trace.
func (in *insn) nextIP() (uint64, int) {
	ip := in.ip + uint64(in.size)
	switch in.class {
	case ClassPTWrite, ClassOther:
		return ip, 0
	case ClassJump, ClassCall:
		if in.direct() {
			return ip + uint64(int64(in.disp)), 0
		}
		return 0, eBadQuery
	case ClassUnknown:
		return 0, eBadInsn
	}
	return 0, eBadQuery
}

var modeX86 = [...]x86.Mode{ModeUnknown: 0, Mode16: x86.Mode16, Mode32: x86.Mode32, Mode64: x86.Mode64}

// classify decodes one instruction from code in mode into e.
func classify(code []byte, mode ExecMode, e *insnEntry) int {
	if mode == ModeUnknown || mode > Mode64 {
		return eBadInsn
	}
	// APX JMPABS (REX2 0xd5 0x00, opcode 0xa1, 64-bit absolute target).
	if mode == Mode64 && len(code) >= 3 && code[0] == 0xd5 && code[1] == 0x00 && code[2] == 0xa1 {
		if len(code) < 11 {
			return eBadInsn
		}
		*e = insnEntry{size: 11, class: ClassJump, kind: ikJmpAbs, mode: mode}
		return 0
	}
	var in x86.Inst
	if err := x86.Decode(code, modeX86[mode], &in); err != nil {
		return eBadInsn
	}
	*e = insnEntry{size: in.Len, mode: mode}
	switch in.Class {
	case x86.Other:
		e.class = ClassOther
		// ERETS (f2 0f 01 ca) and ERETU (f3 0f 01 ca) return from FRED events.
		if in.Len == 4 && (code[0] == 0xf2 || code[0] == 0xf3) && code[1] == 0x0f && code[2] == 0x01 && code[3] == 0xca {
			e.class, e.kind = ClassFarReturn, ikIret
		}
	case x86.CondJump:
		e.class, e.kind, e.disp = ClassCondJump, kindDirect, in.Disp
	case x86.JumpDirect:
		e.class, e.kind, e.disp = ClassJump, kindDirect, in.Disp
	case x86.JumpIndirect:
		e.class = ClassJump
	case x86.JumpFar:
		e.class = ClassFarJump
	case x86.CallDirect:
		e.class, e.kind, e.disp = ClassCall, kindDirect, in.Disp
	case x86.CallIndirect:
		e.class = ClassCall
	case x86.CallFar, x86.Vmcall:
		e.class = ClassFarCall
	case x86.Return:
		e.class = ClassReturn
	case x86.ReturnFar:
		e.class = ClassFarReturn
	case x86.Int:
		e.class, e.kind = ClassFarCall, ikSwInt
	case x86.Iret, x86.Sysret, x86.Sysexit:
		e.class, e.kind = ClassFarReturn, ikIret
	case x86.Syscall, x86.Sysenter:
		e.class, e.kind = ClassFarCall, ikSyscall
	case x86.Vmlaunch, x86.Vmresume:
		e.class, e.kind = ClassFarReturn, ikVMEntry
	case x86.Vmptrld:
		e.class, e.kind = ClassOther, ikVMPtrld
	case x86.MovCR3:
		e.class, e.kind = ClassOther, ikMovCR3
	case x86.Ptwrite:
		e.class = ClassPTWrite
	case x86.Uiret:
		e.class, e.kind = ClassFarReturn, ikUIret
	default:
		e.class = ClassOther
	}
	return 0
}
