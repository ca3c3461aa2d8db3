package x86_test

import (
	"encoding/binary"
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

// Walk 64-bit code with LenClass64, inlined into the loop, and LenClass
// where it declines (here the 66-prefixed NOP and the last 15 bytes),
// counting the instructions and stopping at the first branch.
func ExampleLenClass64() {
	code := []byte{
		0x48, 0x89, 0xe5, // mov %rsp,%rbp
		0x66, 0x90, // xchg %ax,%ax (66-prefixed NOP)
		0x8b, 0x44, 0x24, 0x08, // mov 0x8(%rsp),%eax
		0xe8, 0x00, 0x00, 0x00, 0x00, // call
	}
	code = append(code, make([]byte, 16)...) // padding: a section's next bytes
	for off := 0; off < len(code); {
		var n int
		var class x86.Class
		if off <= len(code)-16 {
			n, class = x86.LenClass64(binary.LittleEndian.Uint64(code[off:]))
		}
		if n == 0 {
			var err error
			if n, class, err = x86.LenClass(code, off, x86.Mode64); err != nil {
				fmt.Println(err)
				return
			}
		}
		fmt.Printf("%d: len %d %v\n", off, n, class)
		if class != x86.Other {
			return
		}
		off += n
	}
	// Output:
	// 0: len 3 other
	// 3: len 2 other
	// 5: len 4 other
	// 9: len 5 call
}
