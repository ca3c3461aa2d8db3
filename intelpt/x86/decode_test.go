package x86

import (
	"debug/elf"
	"encoding/hex"
	"strings"
	"testing"
)

func hexb(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Tricky encodings. Lengths and classes are from the Intel SDM (and agree
// with objdump -M intel64, checked when these were written).
var decodeTests = []struct {
	mode  Mode
	code  string
	len   int
	class Class
	disp  int32
}{
	// VEX/EVEX/XOP
	{Mode64, "c5 f8 77", 3, Other, 0},                       // vzeroupper (x86asm: 4-5)
	{Mode64, "c5 fc 77", 3, Other, 0},                       // vzeroall
	{Mode64, "c4 e1 78 77", 4, Other, 0},                    // vzeroupper, 3-byte VEX
	{Mode64, "c5 f9 70 c1 1b", 5, Other, 0},                 // vpshufd $0x1b
	{Mode64, "c4 e3 79 0f c1 08", 6, Other, 0},              // vpalignr (map 0F3A: imm8)
	{Mode64, "c4 e2 79 00 04 25 00 00 00 00", 10, Other, 0}, // vpshufb disp32 via SIB
	{Mode64, "62 f1 7c 48 58 00", 6, Other, 0},              // vaddps (%rax),%zmm0,%zmm0
	{Mode64, "62 f1 7d 48 70 c1 05", 7, Other, 0},           // vpshufd $5 zmm (EVEX map 0F imm8)
	{Mode64, "62 f3 7d 48 3e c1 01", 7, Other, 0},           // vpcmpub (EVEX map 0F3A)
	{Mode64, "62 f5 7c 48 58 40 01", 7, Other, 0},           // vaddph 0x40(%rax) disp8*N (map 5)
	{Mode32, "62 f1 7c 48 58 00", 6, Other, 0},              // EVEX in 32-bit mode (P0 >= C0)
	{Mode32, "62 00", 2, Other, 0},                          // bound %eax,(%eax)
	{Mode32, "c4 00", 2, Other, 0},                          // les
	{Mode32, "c5 f8 77", 3, Other, 0},                       // vzeroupper in 32-bit mode
	{Mode64, "8f e8 78 a2 00 00", 6, Other, 0},              // vpcmov (XOP map 8: imm8)
	{Mode64, "8f ea 78 10 c0 00 00 00 00", 9, Other, 0},     // bextr imm32 (XOP map 10)
	{Mode64, "8f c0", 2, Other, 0},                          // pop %rax (8F /0)
	// 0F xx specials
	{Mode64, "0f 01 ee", 3, Other, 0},          // rdpkru (x86asm fails)
	{Mode64, "0f 01 ef", 3, Other, 0},          // wrpkru
	{Mode64, "0f 0f c1 9e", 4, Other, 0},       // pfadd (3DNow!)
	{Mode64, "66 0f 78 c0 01 02", 6, Other, 0}, // extrq $1,$2
	{Mode64, "0f 78 c0", 3, Other, 0},          // vmread
	{Mode64, "0f 22 d8", 3, MovCR3, 0},         // mov %rax,%cr3
	{Mode64, "0f 22 18", 3, MovCR3, 0},         // mod ignored
	{Mode64, "44 0f 22 d8", 4, Other, 0},       // mov %rax,%cr11
	{Mode64, "0f 20 d8", 3, Other, 0},          // mov %cr3,%rax
	{Mode64, "f3 48 0f ae e0", 5, Ptwrite, 0},  // ptwrite %rax
	{Mode64, "f3 0f ae 20", 4, Ptwrite, 0},     // ptwritel (%rax)
	{Mode64, "0f ae 20", 3, Other, 0},          // xsave
	{Mode64, "0f c7 30", 3, Vmptrld, 0},        // vmptrld (%rax)
	{Mode64, "66 0f c7 30", 4, Other, 0},       // vmclear
	{Mode64, "f3 0f c7 30", 4, Other, 0},       // vmxon
	{Mode64, "0f c7 f0", 3, Other, 0},          // rdrand
	{Mode64, "0f 01 c1", 3, Vmcall, 0},
	{Mode64, "0f 01 c2", 3, Vmlaunch, 0},
	{Mode64, "0f 01 c3", 3, Vmresume, 0},
	{Mode64, "f3 0f 01 ec", 4, Uiret, 0},
	{Mode64, "0f 05", 2, Syscall, 0},
	{Mode64, "48 0f 07", 3, Sysret, 0},
	{Mode32, "0f 34", 2, Sysenter, 0},
	{Mode32, "0f 35", 2, Sysexit, 0},
	{Mode64, "f3 0f 1e fa", 4, Other, 0}, // endbr64
	// branches
	{Mode64, "66 e8 00 00 00 00", 6, CallDirect, 0}, // 66 ignored for near branches in 64-bit mode
	{Mode64, "66 e9 10 00 00 00", 6, JumpDirect, 16},
	{Mode64, "66 0f 84 fc ff ff ff", 7, CondJump, -4},
	{Mode32, "66 e8 10 00", 4, CallDirect, 16}, // rel16 in 32-bit mode
	{Mode16, "e8 fd ff", 3, CallDirect, -3},
	{Mode16, "66 e8 00 01 00 00", 6, CallDirect, 256},
	{Mode64, "eb fe", 2, JumpDirect, -2},
	{Mode64, "e3 05", 2, CondJump, 5},    // jrcxz
	{Mode64, "e2 80", 2, CondJump, -128}, // loop
	{Mode64, "ff d0", 2, CallIndirect, 0},
	{Mode64, "ff 14 25 00 10 00 00", 7, CallIndirect, 0},
	{Mode64, "41 ff 24 24", 4, JumpIndirect, 0},
	{Mode64, "3e ff e0", 3, JumpIndirect, 0}, // notrack jmp *%rax
	{Mode64, "ff 18", 2, CallFar, 0},         // lcall *(%rax)
	{Mode64, "48 ff 28", 3, JumpFar, 0},      // rex.W ljmp *(%rax)
	{Mode32, "9a 00 00 00 00 08 00", 7, CallFar, 0},
	{Mode32, "66 9a 00 00 08 00", 6, CallFar, 0},
	{Mode16, "ea 00 00 00 f0", 5, JumpFar, 0},
	{Mode64, "c3", 1, Return, 0},
	{Mode64, "f3 c3", 2, Return, 0}, // repz ret
	{Mode64, "c2 08 00", 3, Return, 0},
	{Mode64, "48 cb", 2, ReturnFar, 0},
	{Mode64, "ca 08 00", 3, ReturnFar, 0},
	{Mode64, "cc", 1, Int, 0},
	{Mode64, "cd 80", 2, Int, 0},
	{Mode32, "ce", 1, Int, 0},
	{Mode64, "f1", 1, Int, 0},
	{Mode64, "48 cf", 2, Iret, 0},
	// immediates
	{Mode64, "48 b8 01 00 00 00 00 00 00 00", 10, Other, 0}, // movabs imm64
	{Mode64, "b8 01 00 00 00", 5, Other, 0},
	{Mode64, "66 b8 01 00", 4, Other, 0},
	{Mode64, "66 48 b8 01 00 00 00 00 00 00 00", 11, Other, 0}, // REX.W beats 66
	{Mode64, "48 c7 c0 01 00 00 00", 7, Other, 0},              // imm32 sign-extended
	{Mode64, "66 05 01 00", 4, Other, 0},
	{Mode64, "f6 c0 01", 3, Other, 0},          // test $1,%al
	{Mode64, "f6 d0", 2, Other, 0},             // not %al
	{Mode64, "f7 c0 01 00 00 00", 6, Other, 0}, // test $1,%eax
	{Mode64, "66 f7 c0 01 00", 5, Other, 0},
	{Mode64, "f7 d8", 2, Other, 0},       // neg %eax
	{Mode64, "c8 01 02 03", 4, Other, 0}, // enter
	{Mode64, "6a ff", 2, Other, 0},
	{Mode64, "66 68 01 00", 4, Other, 0},       // pushw $1
	{Mode64, "c7 f8 00 00 00 00", 6, Other, 0}, // xbegin
	// moffs
	{Mode64, "a1 00 00 00 00 00 00 00 00", 9, Other, 0},
	{Mode64, "67 a1 00 00 00 00", 6, Other, 0},
	{Mode32, "a1 00 00 00 00", 5, Other, 0},
	{Mode32, "67 a1 00 00", 4, Other, 0},
	{Mode16, "a1 00 00", 3, Other, 0},
	{Mode16, "67 a1 00 00 00 00", 6, Other, 0},
	// ModRM/SIB/displacement
	{Mode64, "8b 05 00 00 00 00", 6, Other, 0},    // rip-relative
	{Mode64, "8b 04 25 00 00 00 00", 7, Other, 0}, // SIB no base
	{Mode64, "8b 44 24 08", 4, Other, 0},
	{Mode64, "8b 84 24 00 01 00 00", 7, Other, 0},
	{Mode64, "8b 45 00", 3, Other, 0},       // rbp needs disp8
	{Mode32, "67 8b 06 00 00", 5, Other, 0}, // 16-bit addressing: disp16
	{Mode16, "8b 06 00 00", 4, Other, 0},
	{Mode16, "8b 04", 2, Other, 0},
	{Mode16, "67 8b 04 25 00 00 00 00", 8, Other, 0},        // 32-bit addressing in 16-bit mode
	{Mode64, "66 2e 0f 1f 84 00 00 00 00 00", 10, Other, 0}, // nopw %cs:0(%rax,%rax)
	{Mode64, "40 66 90", 3, Other, 0},                       // REX before 66 is ignored, not an instruction
	{Mode32, "40", 1, Other, 0},                             // inc %eax
}

func TestDecodeTable(t *testing.T) {
	for _, tt := range decodeTests {
		b := hexb(t, tt.code)
		var in Inst
		err := Decode(b, tt.mode, &in)
		if err != nil || int(in.Len) != tt.len || in.Class != tt.class || in.Disp != tt.disp {
			t.Errorf("%v % x: got len %d class %v disp %d err %v; want len %d class %v disp %d",
				tt.mode, b, in.Len, in.Class, in.Disp, err, tt.len, tt.class, tt.disp)
		}
		// Every proper prefix is truncated.
		for n := 0; n < tt.len; n++ {
			if err := Decode(b[:n], tt.mode, &in); err != ErrTruncated {
				t.Errorf("%v % x: Decode of %d bytes: %v, want ErrTruncated", tt.mode, b, n, err)
			}
		}
	}
}

func TestDecodeInvalid(t *testing.T) {
	for _, tt := range []struct {
		mode Mode
		code string
	}{
		{Mode64, "9a 00 00 00 00 00 00"}, // lcall ptr
		{Mode64, "ea 00 00 00 00 00 00"},
		{Mode64, "ce"},          // into
		{Mode64, "06"},          // push es
		{Mode64, "c4 e0 78 77"}, // VEX map 0
		{Mode64, "0f 0a"},
		{Mode64, "66 66 66 66 66 66 66 66 66 66 66 66 66 66 90"}, // 15 bytes is fine...
		{0, "90"},
	} {
		b := hexb(t, tt.code)
		var in Inst
		err := Decode(b, tt.mode, &in)
		if tt.code == "66 66 66 66 66 66 66 66 66 66 66 66 66 66 90" {
			if err != nil || in.Len != 15 {
				t.Errorf("15-byte nop: len %d err %v", in.Len, err)
			}
			if err := Decode(append([]byte{0x66}, b...), tt.mode, &in); err != ErrInvalid {
				t.Errorf("16-byte nop: %v, want ErrInvalid", err)
			}
			continue
		}
		if err != ErrInvalid {
			t.Errorf("%v % x: %v, want ErrInvalid", tt.mode, b, err)
		}
	}
}

func TestTarget(t *testing.T) {
	var in Inst
	if err := Decode(hexb(t, "e8 fb ff ff ff"), Mode64, &in); err != nil {
		t.Fatal(err)
	}
	if got := in.Target(0x1000); got != 0x1000 {
		t.Errorf("call -5 at 0x1000: target %#x", got)
	}
	if err := Decode(hexb(t, "66 e9 00 00"), Mode32, &in); err != nil {
		t.Fatal(err)
	}
	if got := in.Target(0x1fffc); got != 0x0000 { // (0x1fffc + 4) & 0xffff
		t.Errorf("jmpw at 0x1fffc: target %#x, want 0", got)
	}
	if err := Decode(hexb(t, "66 e9 00 00 00 80"), Mode16, &in); err != nil { // jmp rel32 in 16-bit mode
		t.Fatal(err)
	}
	if got := in.Target(0x1000); got != 0x80001006 {
		t.Errorf("jmpl in 16-bit mode: target %#x, want 0x80001006", got)
	}
	if err := Decode(hexb(t, "eb 10"), Mode32, &in); err != nil {
		t.Fatal(err)
	}
	if got := in.Target(0xfffffff0); got != 0x2 {
		t.Errorf("jmp in 32-bit mode wraps: target %#x, want 2", got)
	}
}

func TestDecodeAllocs(t *testing.T) {
	code := hexb(t, "62 f1 7c 48 58 00")
	var in Inst
	if n := testing.AllocsPerRun(100, func() { _ = Decode(code, Mode64, &in) }); n != 0 {
		t.Errorf("%v allocations per Decode", n)
	}
}

// TestFastPathEqualsSlow: Decode's fast path (taken when at least 16 bytes
// follow) gives the same result as decodeSlow at every offset of random
// code and of libc's text, in every mode.
func TestFastPathEqualsSlow(t *testing.T) {
	bufs := [][]byte{randomCode(1, 1<<18)}
	if f, err := elf.Open("/lib/x86_64-linux-gnu/libc.so.6"); err == nil {
		if s := f.Section(".text"); s != nil {
			if b, err := s.Data(); err == nil {
				bufs = append(bufs, b)
			}
		}
		f.Close()
	}
	fast := 0
	for _, code := range bufs {
		for _, mode := range []Mode{Mode16, Mode32, Mode64} {
			for off := 0; off+16 <= len(code); off++ {
				var a, b Inst
				ea := Decode(code[off:], mode, &a)
				eb := decodeSlow(code[off:], mode, &b)
				if ea != eb || a != b {
					t.Fatalf("%v % x: Decode %+v %v, decodeSlow %+v %v", mode, code[off:off+15], a, ea, b, eb)
				}
				if mode != Mode16 && ea == nil && fastPrefix[mode-Mode32][code[off]] < 2 {
					fast++
				}
			}
		}
	}
	if fast == 0 {
		t.Error("fast path never taken")
	}
}
