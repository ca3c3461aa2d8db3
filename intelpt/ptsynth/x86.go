package ptsynth

import "github.com/iotap/iotap/intelpt/x86"

// X86 classifies 64-bit code with package intelpt/x86.
func X86(code []byte) (int, Kind, error) {
	var in x86.Inst
	if err := x86.Decode(code, x86.Mode64, &in); err != nil {
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
