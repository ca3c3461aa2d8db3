//go:build linux

package calls

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/symtab"
	"github.com/iotap/iotap/internal/ptsynth"
)

var (
	synthOnce sync.Once
	synthRes  *ptsynth.Synthesized
	synthErr  error
	synthDir  string // removed by TestMain
)

func TestMain(m *testing.M) {
	code := m.Run()
	if synthDir != "" {
		os.RemoveAll(synthDir)
	}
	os.Exit(code)
}

func synthesize(t *testing.T) *ptsynth.Synthesized {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	synthOnce.Do(func() {
		dir, err := os.MkdirTemp("", "calls")
		if err != nil {
			synthErr = err
			return
		}
		synthDir = dir
		synthRes, synthErr = ptsynth.SynthesizeProg(dir, 256)
	})
	if synthErr != nil {
		t.Fatal(synthErr)
	}
	return synthRes
}

// trueCalls rebuilds the call nesting from the ptrace run alone, by the
// stack pointer: a frame begins after a call instruction and ends at the
// first instruction that runs with the stack pointer above the return
// address the call pushed (its return, or a longjmp that restored an older
// stack). A jump to another function's entry replaces the frame (a tail
// call). When the stack empties, the function running becomes the root.
func trueCalls(run *ptsynth.Run, enc *ptsynth.Encoded, sym Symbolizer) []Call {
	type tf struct {
		c      Call
		sp     uint64
		lo, hi uint64
	}
	var out []Call
	var st []tf
	open := func(ip, sp uint64, i int, kind string) {
		f := tf{sp: sp}
		if fn, ok := sym.Func(ip); ok {
			f.lo, f.hi, f.c.Func = fn.Entry, fn.End, fn.Name
		} else {
			f.lo, f.hi, f.c.Func = ip, ip+1, sym.Unknown(ip)
		}
		f.c.Depth, f.c.Kind, f.c.BeginInsn = len(st), kind, uint64(i)
		st = append(st, f)
	}
	closeTop := func(i int) {
		f := st[len(st)-1]
		f.c.EndInsn = uint64(i)
		out = append(out, f.c)
		st = st[:len(st)-1]
	}
	steps := run.Steps
	for i, s := range steps {
		for len(st) > 0 && s.SP > st[len(st)-1].sp {
			closeTop(i)
		}
		if len(st) == 0 {
			open(s.IP, s.SP, i, KindRoot)
		}
		if i+1 == len(steps) {
			break
		}
		next := steps[i+1]
		fall := s.IP + uint64(enc.Lens[i])
		switch enc.Kinds[i] {
		case ptsynth.CallDirect, ptsynth.CallIndirect:
			if next.IP != fall {
				k := KindCall
				if enc.Kinds[i] == ptsynth.CallIndirect {
					k = KindIndirect
				}
				open(next.IP, next.SP, i+1, k)
			}
		case ptsynth.JumpDirect, ptsynth.JumpIndirect:
			top := st[len(st)-1]
			if next.IP >= top.lo && next.IP < top.hi {
				break
			}
			if fn, ok := sym.Func(next.IP); ok && fn.Entry == next.IP && fn.Entry != top.lo {
				closeTop(i + 1)
				open(next.IP, top.sp, i+1, KindTail)
			}
		}
	}
	for len(st) > 0 {
		closeTop(len(steps))
	}
	return out
}

func decodeCalls(t *testing.T, s *ptsynth.Synthesized) ([]Call, *Tracker, *ProcSymbolizer) {
	t.Helper()
	pt, err := intelpt.PerfDataPT(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := intelpt.PerfSideband(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	proc := sb.AddressSpaces().Process(int32(s.Run.PID))
	im, _, paths := proc.LoadImage(&symtab.Finder{})
	sym := NewProcSymbolizer(proc, paths, symtab.Options{})
	var got []Call
	tr := NewTracker(func(c *Call) { got = append(got, *c) })
	tr.Thread(int32(s.Run.PID), sym)
	if err := Decode(pt.Streams[0].Data, intelpt.FlowConfig{Image: im}, tr, nil); err != nil {
		t.Fatal(err)
	}
	tr.Finish(s.Enc.TSC[len(s.Enc.TSC)-1])
	return got, tr, sym
}

func byBegin(c []Call) {
	sort.SliceStable(c, func(i, j int) bool {
		if c[i].BeginInsn != c[j].BeginInsn {
			return c[i].BeginInsn < c[j].BeginInsn
		}
		return c[i].Depth < c[j].Depth
	})
}

// TestAnalyzePerThreadAndPerCPU: Analyze gives the same calls from the
// perf.data written as a per-thread trace and as a per-CPU trace (whose
// thread comes from the sideband's ITRACE_START), with no gap.
func TestAnalyzePerThreadAndPerCPU(t *testing.T) {
	s := synthesize(t)
	direct, _, _ := decodeCalls(t, s)
	byBegin(direct)
	for _, perThread := range []bool{true, false} {
		b := ptsynth.PerfData(s.Run, s.Enc, ptsynth.PerfOptions{CPU: 1, PerThread: perThread})
		in, err := ReadPerfData(b)
		if err != nil {
			t.Fatal(err)
		}
		var got []Call
		res, err := Analyze(in, Options{OnCall: func(c *Call) { got = append(got, *c) }})
		if err != nil {
			t.Fatal(err)
		}
		byBegin(got)
		if res.Gaps != 0 || len(got) != len(direct) || in.Loss != "" {
			t.Fatalf("per-thread %v: %d gaps, %d calls, want %d; loss %q", perThread, res.Gaps, len(got), len(direct), in.Loss)
		}
		for i := range got {
			if got[i].EndReason == EndTraceEnd { // Finish's time: the last one decoded, or the caller's
				got[i].End = direct[i].End
			}
			if got[i] != direct[i] {
				t.Fatalf("per-thread %v: call %d: %+v, want %+v", perThread, i, got[i], direct[i])
			}
		}
		if th := res.Tree.Children; len(th) != 1 || th[0].Name != "prog "+fmt.Sprint(s.Run.PID) {
			t.Errorf("threads of the tree: %q", th[0].Name)
		}
	}
}

// TestCallsOfRealProgram: the calls rebuilt from the synthesized PT of
// the test program are the calls its run made (by the stack pointer),
// with the functions' names from the real ELF files; and the program's
// own calls are what its source says.
func TestCallsOfRealProgram(t *testing.T) {
	s := synthesize(t)
	got, tr, sym := decodeCalls(t, s)
	want := trueCalls(s.Run, s.Enc, sym)
	byBegin(got)
	byBegin(want)
	t.Logf("%d calls (stats %+v), %d true calls", len(got), tr.Stats, len(want))
	if len(got) != len(want) {
		t.Errorf("%d calls, want %d", len(got), len(want))
	}
	bad := 0
	for i := 0; i < min(len(got), len(want)); i++ {
		g, w := got[i], want[i]
		endOK := g.EndInsn == w.EndInsn || (g.EndReason == EndUnwound && g.EndInsn >= w.EndInsn && g.EndInsn <= w.EndInsn+16)
		if g.Func != w.Func || g.Depth != w.Depth || g.BeginInsn != w.BeginInsn || !endOK || g.Kind != w.Kind {
			if bad++; bad <= 10 {
				t.Errorf("call %d: got %s depth %d [%d,%d) %s/%s; want %s depth %d [%d,%d) %s", i, g.Func, g.Depth, g.BeginInsn, g.EndInsn, g.Kind, g.EndReason,
					w.Func, w.Depth, w.BeginInsn, w.EndInsn, w.Kind)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d calls differ", bad)
	}

	// What the source says (prog.c).
	count := map[string]int{}
	maxDepth := map[string]int{}
	kinds := map[string]map[string]int{}
	var mainDepth int
	for _, c := range got {
		count[c.Func]++
		if kinds[c.Func] == nil {
			kinds[c.Func] = map[string]int{}
		}
		kinds[c.Func][c.Kind]++
		if c.Func == "main" {
			mainDepth = c.Depth
		}
		if c.Depth > maxDepth[c.Func] {
			maxDepth[c.Func] = c.Depth
		}
	}
	for _, c := range []struct {
		fn    string
		n     int
		kinds string
	}{
		{"main", 1, "map[root:1]"},
		{"fib", 177, "map[call:177]"},
		{"square", 10, "map[indirect-call:10]"},
		{"twice", 20, "map[indirect-call:10 tail-call:10]"},
		{"twice_plus_one", 10, "map[indirect-call:10]"},
		{"deep", 6, "map[call:6]"},
		{"cmp", -1, "map[indirect-call:%d]"},
		{"qsort@plt", 1, "map[call:1]"},
		{"qsort", 1, "map[tail-call:1]"},
		{"_setjmp@plt", 1, "map[call:1]"},
	} {
		n := c.n
		if n < 0 {
			n = count[c.fn]
			c.kinds = fmt.Sprintf(c.kinds, n)
			if n < 15 { // sorting 16 ints takes at least 15 comparisons
				t.Errorf("cmp called %d times", n)
			}
		}
		if count[c.fn] != n || fmt.Sprint(kinds[c.fn]) != c.kinds {
			t.Errorf("%s: %d calls %v, want %d %s", c.fn, count[c.fn], kinds[c.fn], n, c.kinds)
		}
	}
	if d := maxDepth["fib"] - mainDepth; d != 10 { // fib(10) -> fib(9) -> ... -> fib(1): 10 frames below main
		t.Errorf("fib nests %d deep below main, want 10", d)
	}
	for _, c := range got {
		if c.Func == "deep" && c.EndReason != EndUnwound {
			t.Errorf("deep ended by %s, want unwound (longjmp)", c.EndReason)
		}
	}
}

// TestCaptureDirDecodesElsewhere: a capture directory as `iotap pt
// capture --copy-binaries` writes it (trace, raw sideband, capture.json,
// mapped_files.json, binaries/ by build-id) decodes with none of the
// traced files at their paths (an empty sysroot): the same calls as the
// perf.data. Without the copies, the mappings are reported unfound.
func TestCaptureDirDecodesElsewhere(t *testing.T) {
	s := synthesize(t)
	want, _, _ := decodeCalls(t, s)
	byBegin(want)
	dir := t.TempDir()
	raw := ptsynth.Sideband(s.Run, s.Enc)
	ci := &intelpt.CaptureInfo{Tool: "iotap", Mode: "per-thread", PID: s.Run.PID, SampleType: ptsynth.SampleType,
		Buffers: []intelpt.CaptureBuffer{{CPU: -1, File: "thread.pt", Sideband: "thread.sideband"}}}
	if err := intelpt.WriteCaptureInfo(dir, ci); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "thread.pt"), s.Enc.PT, 0o600)
	os.WriteFile(filepath.Join(dir, "thread.sideband"), raw, 0o600)
	files := intelpt.MappedFiles(intelpt.RawSideband(raw, ptsynth.SampleType, true))
	if err := intelpt.CopyBinaries(dir, files); err != nil {
		t.Fatal(err)
	}
	if err := intelpt.WriteMappedFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	// The build-ids are perf's (the perf.data's build-id table).
	sb, _ := intelpt.PerfSideband(s.Perf)
	perfIDs := map[string]string{}
	for _, b := range sb.BuildIDs {
		perfIDs[b.Filename] = b.Hex()
	}
	for _, f := range files {
		if f.BuildID == "" || f.BuildID != perfIDs[f.Path] || f.Copy == "" || f.Error != "" {
			t.Errorf("mapped file %+v; perf's build-id %s", f, perfIDs[f.Path])
		}
	}
	if len(files) != 3 {
		t.Errorf("%d mapped files, want prog, libc and ld.so: %+v", len(files), files)
	}

	nowhere := t.TempDir()
	for _, withCopies := range []bool{true, false} {
		in, err := ReadCaptureDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var dirs []string
		if withCopies {
			dirs = []string{filepath.Join(dir, intelpt.BinariesDir)}
		}
		var got []Call
		res, err := Analyze(in, Options{Finder: Finder(nowhere, dirs), OnCall: func(c *Call) { got = append(got, *c) }})
		if err != nil {
			t.Fatal(err)
		}
		if !withCopies {
			if len(res.Unfound) != 4 || res.Gaps == 0 { // prog, libc, ld.so, [vdso]
				t.Errorf("without copies: %d unfound, %d gaps", len(res.Unfound), res.Gaps)
			}
			continue
		}
		byBegin(got)
		if len(got) != len(want) || res.Gaps != 0 || len(res.Unfound) != 1 {
			t.Fatalf("%d calls, want %d; %d gaps, unfound %v", len(got), len(want), res.Gaps, res.Unfound)
		}
		for i := range got {
			got[i].End, want[i].End = 0, 0
			if got[i] != want[i] {
				t.Fatalf("call %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	}
}
