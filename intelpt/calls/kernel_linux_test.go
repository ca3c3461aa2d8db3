//go:build linux

package calls

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/ptsynth"
	"github.com/iotap/iotap/internal/vmlab"
	"github.com/iotap/iotap/ksym"
)

// The lab kernel (shared test data; absent on CI: the test skips).
const labBzImage = "../../../shared/vm/bzImage"

// TestLabKernelCalls: kernel-mode trace through the lab kernel's real
// code. The guest's /proc/kallsyms (booted in the QEMU lab) names its
// functions at their run-time addresses (KASLR included). A path through
// a kernel function (ptsynth.KernelPath: forward branches taken, direct
// calls followed) is encoded as a CPU would trace it at those addresses,
// and decoded with the bzImage's vmlinux (LoadKernel, slid to kallsyms's
// _text) and the kallsyms: every instruction is decoded, and the calls
// are the path's direct calls and tail calls (jumps to another function's
// entry) named as the guest's kallsyms says. Without the kernel the trace
// is a gap.
func TestLabKernelCalls(t *testing.T) {
	bz, err := os.ReadFile(labBzImage)
	if err != nil {
		t.Skipf("lab kernel not present: %v", err)
	}
	res := vmlab.Run(t, vmlab.Machine{Script: "cat /proc/kallsyms > /out/kallsyms\n"})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	kallsyms := res.ReadOut(t, "kallsyms")
	// the oracle: kallsyms's text symbols, read here line by line
	byAddr := map[uint64]string{}
	var text, etext uint64
	for _, l := range strings.Split(string(kallsyms), "\n") {
		var a uint64
		var typ, name string
		if n, _ := fmt.Sscanf(l, "%x %s %s", &a, &typ, &name); n != 3 || strings.Contains(l, "[") {
			continue
		}
		switch name {
		case "_text":
			text = a
		case "_etext":
			etext = a
		}
		if (typ == "t" || typ == "T") && byAddr[a] == "" {
			byAddr[a] = name
		}
	}
	if text == 0 || etext <= text {
		t.Fatalf("guest kallsyms without _text/_etext (%d bytes)", len(kallsyms))
	}
	vm, err := ptsynth.ExtractVmlinux(bz)
	if err != nil {
		t.Fatal(err)
	}
	vmPath := filepath.Join(t.TempDir(), "vmlinux")
	if err := os.WriteFile(vmPath, vm, 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := intelpt.LoadKernel(vmPath, text, 0)
	if err != nil {
		t.Fatal(err)
	}
	var code []byte
	var base uint64
	for _, s := range k.Sections {
		if text >= s.Addr && text < s.Addr+uint64(len(s.Data)) {
			code, base = s.Data, s.Addr
		}
	}
	if code == nil {
		t.Fatalf("no kernel section holds _text %#x (slide %#x)", text, k.Slide)
	}
	var entries []uint64
	for a := range byAddr {
		if a >= base && a < base+uint64(len(code)) {
			entries = append(entries, a)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i] < entries[j] })
	// the first function whose path makes at least 3 calls of at least 2
	// functions in 150+ instructions
	var run *ptsynth.Run
	var want []string
	for _, e := range entries {
		r := ptsynth.KernelPath(code, base, e, 4000)
		if r == nil || len(r.Steps) < 150 {
			continue
		}
		w := pathCalls(r, byAddr)
		callees := map[string]bool{}
		for _, c := range w {
			callees[c] = true
		}
		if len(w) >= 3 && len(callees) >= 2 {
			run, want = r, w
			t.Logf("path through %s: %d instructions, calls %v", byAddr[e], len(r.Steps), w)
			break
		}
	}
	if run == nil {
		t.Fatal("no kernel function with a synthesizable path")
	}
	run.PID, run.Comm = 1, "kernel"
	enc, err := ptsynth.Encode(run, ptsynth.X86, ptsynth.Options{PSBPeriod: 512})
	if err != nil {
		t.Fatal(err)
	}
	perf := ptsynth.PerfData(run, enc, ptsynth.PerfOptions{PerThread: true})
	kt, err := ksym.Load(bytes.NewReader(kallsyms), nil)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := NewKernelSymbols(kt, k)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadPerfData(perf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	ares, err := Analyze(in, Options{Kernel: k, KernelSymbols: ks, OnBegin: func(c *Call) {
		if c.Kind != KindRoot {
			got = append(got, c.Kind+" "+c.Func)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if ares.Gaps != 0 || ares.Stats.Insns != uint64(len(run.Steps)) || len(ares.Unfound) != 0 {
		t.Errorf("%d gaps, %d instructions of %d, unfound %v", ares.Gaps, ares.Stats.Insns, len(run.Steps), ares.Unfound)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("calls\n%v\nwant\n%v", got, want)
	}
	// without the kernel: the trace is a gap
	in, _ = ReadPerfData(perf)
	if r, err := Analyze(in, Options{}); err != nil || r.Gaps == 0 {
		t.Errorf("without the kernel: %v, %+v", err, r)
	}
}

// pathCalls lists the calls of a kernel path as the ELF symbols name them:
// direct calls ("call NAME") and jumps to another function's entry
// ("tail-call NAME").
func pathCalls(r *ptsynth.Run, byAddr map[uint64]string) []string {
	var out []string
	for i, s := range r.Steps[:len(r.Steps)-1] {
		code := r.Bytes(s.IP)
		_, k, _ := ptsynth.X86(code)
		next := r.Steps[i+1].IP
		name, entry := byAddr[next]
		switch {
		case k == ptsynth.CallDirect:
			if !entry {
				name = "?"
			}
			out = append(out, KindCall+" "+name)
		case k == ptsynth.JumpDirect && entry:
			out = append(out, KindTail+" "+name)
		}
	}
	return out
}
