package ptsynth

import "github.com/iotap/iotap/intelpt/x86"

// X86 classifies 64-bit code with package intelpt/x86.
func X86(code []byte) (int, Kind, error) { return classify(code, x86.Mode64) }

// X86Mode32 classifies 32-bit code; int (int $0x80), sysenter and
// syscall are system calls.
func X86Mode32(code []byte) (int, Kind, error) {
	n, k, err := classify(code, x86.Mode32)
	if err == nil && k == Unsupported {
		var in x86.Inst
		x86.Decode(code, x86.Mode32, &in)
		if in.Class == x86.Int || in.Class == x86.Sysenter {
			k = Syscall
		}
	}
	return n, k, err
}

func classify(code []byte, mode x86.Mode) (int, Kind, error) {
	var in x86.Inst
	if err := x86.Decode(code, mode, &in); err != nil {
		return 0, Other, err
	}
	k := Unsupported
	switch in.Class {
	case x86.Other, x86.Ptwrite, x86.Vmptrld, x86.MovCR3:
		k = Other
	case x86.CondJump:
		k = CondJump
	case x86.JumpDirect:
		k = JumpDirect
	case x86.CallDirect:
		k = CallDirect
	case x86.JumpIndirect:
		k = JumpIndirect
	case x86.CallIndirect:
		k = CallIndirect
	case x86.Return:
		k = Return
	case x86.Syscall:
		k = Syscall
	}
	return int(in.Len), k, nil
}
