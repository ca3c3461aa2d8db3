package x86_test

import (
	"fmt"

	"github.com/iotap/iotap/intelpt/x86"
)

// Walk a piece of 64-bit code and print each instruction's length and class,
// with the target of the direct branches.
func Example() {
	code := []byte{
		0x55,             // push %rbp
		0x48, 0x89, 0xe5, // mov %rsp,%rbp
		0x74, 0x05, // je +5
		0xe8, 0x00, 0x01, 0x00, 0x00, // call +0x100
		0xc5, 0xf8, 0x77, // vzeroupper
		0xff, 0xe0, // jmp *%rax
		0xc3, // ret
	}
	ip := uint64(0x401000)
	var in x86.Inst
	for len(code) > 0 {
		if err := x86.Decode(code, x86.Mode64, &in); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%#x len %d %v", ip, in.Len, in.Class)
		if in.Class.IsDirect() {
			fmt.Printf(" -> %#x", in.Target(ip))
		}
		fmt.Println()
		ip += uint64(in.Len)
		code = code[in.Len:]
	}
	// Output:
	// 0x401000 len 1 other
	// 0x401001 len 3 other
	// 0x401004 len 2 jcc -> 0x40100b
	// 0x401006 len 5 call -> 0x40110b
	// 0x40100b len 3 other
	// 0x40100e len 2 jmp-indirect
	// 0x401010 len 1 ret
}

// Walk 64-bit code to its first branch with LenClass, as a block decoder
// does: length and class of each instruction, then Decode for the branch's
// target.
func ExampleLenClass() {
	code := []byte{
		0x55,             // push %rbp
		0x48, 0x89, 0xe5, // mov %rsp,%rbp
		0xc5, 0xf8, 0x77, // vzeroupper
		0x74, 0x05, // je +5
	}
	code = append(code, make([]byte, 16)...) // padding: a section's next bytes
	ip := uint64(0x401000)
	for off := 0; ; {
		n, class, err := x86.LenClass(code, off, x86.Mode64)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%#x len %d %v\n", ip+uint64(off), n, class)
		if class != x86.Other {
			var in x86.Inst
			_ = x86.Decode(code[off:], x86.Mode64, &in)
			fmt.Printf("target %#x\n", in.Target(ip+uint64(off)))
			return
		}
		off += n
	}
	// Output:
	// 0x401000 len 1 other
	// 0x401001 len 3 other
	// 0x401004 len 3 other
	// 0x401007 len 2 jcc
	// target 0x40100e
}
