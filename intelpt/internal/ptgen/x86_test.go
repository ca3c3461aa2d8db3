package ptgen

import (
	"testing"

	"github.com/iotap/iotap/intelpt/x86"
)

// TestX86Decoder checks intelpt/x86 against the generator's instructions,
// whose encodings are built by hand from the SDM opcode tables (and whose
// boundaries objdump confirms, see TestObjdumpBoundaries): the same length,
// the branch class the generator meant, the same direct-branch target.
func TestX86Decoder(t *testing.T) {
	want := map[Kind][]x86.Class{
		KindOther:    {x86.Other},
		KindJcc:      {x86.CondJump},
		KindJmp:      {x86.JumpDirect},
		KindCall:     {x86.CallDirect},
		KindCallNext: {x86.CallDirect},
		KindRet:      {x86.Return},
		KindJmpInd:   {x86.JumpIndirect},
		KindCallInd:  {x86.CallIndirect},
		KindSyscall:  {x86.Syscall},
		KindFarRet:   {x86.Sysret, x86.Iret},
		KindPTWrite:  {x86.Ptwrite},
	}
	n := 0
	seeds := []uint64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		p, err := Generate(Config{Seed: seed, Insns: 1, CodeSize: 1 << 20, Kernel: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.insns {
			in := &p.insns[i]
			s := &p.secs[0]
			if in.addr-s.base >= uint64(len(s.code)) {
				s = &p.secs[1]
			}
			code := s.code[in.addr-s.base:]
			var d x86.Inst
			if err := x86.Decode(code, x86.Mode64, &d); err != nil {
				t.Fatalf("%#x (% x): %v", in.addr, code[:in.size], err)
			}
			ok := false
			for _, c := range want[in.kind] {
				ok = ok || d.Class == c
			}
			if int(d.Len) != int(in.size) || !ok {
				t.Fatalf("%#x (% x, %v %v): x86 says length %d, class %v", in.addr, code[:in.size], in.kind, in.class, d.Len, d.Class)
			}
			if d.Class.IsDirect() {
				target := in.target
				if in.kind == KindCallNext {
					target = in.addr + uint64(in.size)
				}
				if got := d.Target(in.addr); got != target {
					t.Fatalf("%#x (% x): x86 says target %#x, generator %#x", in.addr, code[:in.size], got, target)
				}
			}
			n++
		}
	}
	t.Logf("%d instructions: same length, class and target", n)
}
