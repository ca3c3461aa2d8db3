//go:build linux

package calls

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/ptsynth"
	"github.com/iotap/iotap/intelpt/symtab"
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
// thread comes from the sideband's ITRACE_START), with no gap; and the
// same again from the perf.data file read as it is decoded
// (ReadPerfDataFile), its trace in one AUXTRACE record (mapped from the
// file) or in records of 97 bytes with AUX records between them (copied
// to a temporary file and mapped).
func TestAnalyzePerThreadAndPerCPU(t *testing.T) {
	s := synthesize(t)
	direct, _, _ := decodeCalls(t, s)
	byBegin(direct)
	type variant struct {
		perThread bool
		chunk     int
		file      bool
	}
	for _, v := range []variant{{true, 0, false}, {false, 0, false}, {true, 0, true}, {true, 97, true}, {false, 97, true}} {
		perThread := v.perThread
		b := ptsynth.PerfData(s.Run, s.Enc, ptsynth.PerfOptions{CPU: 1, PerThread: perThread, Chunk: v.chunk})
		var in *Input
		var err error
		if v.file {
			p := filepath.Join(t.TempDir(), "perf.data")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			in, err = ReadPerfDataFile(p)
			if err == nil && (in.Streams[0].Data != nil || in.TraceBytes() != int64(len(s.Enc.PT))) {
				t.Fatalf("%+v: the stream is held (%d bytes) or its size is wrong (%d)", v, len(in.Streams[0].Data), in.TraceBytes())
			}
			if err == nil {
				defer in.Close()
			}
		} else {
			in, err = ReadPerfData(b)
		}
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
	if len(files) != 4 || files[3].Path != intelpt.VDSOName || files[3].Copy == "" {
		t.Errorf("%d mapped files, want the vDSO (copied), prog, libc and ld.so: %+v", len(files), files)
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
			// prog, libc, ld.so; the vDSO is this process's (same kernel, same build-id)
			if len(res.Unfound) != 3 || res.Gaps == 0 {
				t.Errorf("without copies: %d unfound, %d gaps", len(res.Unfound), res.Gaps)
			}
			continue
		}
		byBegin(got)
		if len(got) != len(want) || res.Gaps != 0 || len(res.Unfound) != 0 {
			t.Fatalf("%d calls, want %d; %d gaps, unfound %v", len(got), len(want), res.Gaps, res.Unfound)
		}
		vdso := 0
		for i := range got {
			got[i].End, want[i].End = 0, 0
			if got[i] != want[i] {
				t.Fatalf("call %d: %+v, want %+v", i, got[i], want[i])
			}
			if strings.Contains(got[i].Func, "clock_gettime") && got[i].Kind == KindIndirect {
				vdso++
			}
		}
		if vdso == 0 { // libc calls the vDSO's clock_gettime through a pointer
			t.Errorf("no call of the vDSO's clock_gettime")
		}
	}
}

// TestResolution: with a resolution, the calls reported are exactly the
// calls of the full analysis that last at least that long (same fields,
// same end order), OnBegin hears of them in begin order before their
// ends, the tree counts only them while every instruction still counts
// once (as its own or as a kept caller's), and the collapsed stacks weigh
// all instructions.
func TestResolution(t *testing.T) {
	s := synthesize(t)
	in, err := ReadPerfData(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	var all []Call
	full, err := Analyze(in, Options{OnCall: func(c *Call) { all = append(all, *c) }})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	var durs []uint64 // the distinct durations of calls
	for _, c := range all {
		if d := in.ToNS(c.End) - in.ToNS(c.Begin); d > 0 && !seen[d] {
			seen[d] = true
			durs = append(durs, d)
		}
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	if len(durs) < 3 {
		t.Fatalf("calls last %v: too few different durations", durs)
	}
	t.Logf("%d calls, %d different durations, %d instructions", len(all), len(durs), full.Stats.Insns)
	for _, min := range []uint64{durs[0], durs[len(durs)/2], durs[len(durs)-1], durs[len(durs)-1] + 1} {
		var want []Call
		wantCount := map[string]int{}
		for _, c := range all {
			if in.ToNS(c.End)-in.ToNS(c.Begin) >= min {
				want = append(want, c)
				wantCount[c.Func]++
			}
		}
		var got []Call
		var events []string // "b FUNC BEGIN" and "e FUNC END" in the order told
		res, err := Analyze(in, Options{Resolution: min,
			OnBegin: func(c *Call) { events = append(events, fmt.Sprintf("b %s %d", c.Func, c.Begin)) },
			OnCall: func(c *Call) {
				got = append(got, *c)
				events = append(events, fmt.Sprintf("e %s %d", c.Func, c.End))
			}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("resolution %d: %d calls, want %d of %d", min, len(got), len(want), len(all))
		}
		for i := range got {
			g, w := got[i], want[i]
			g.SelfInsn, w.SelfInsn, g.Children, w.Children = 0, 0, 0, 0 // short callees count as own
			if g != w {
				t.Fatalf("resolution %d: call %d: %+v, want %+v", min, i, g, w)
			}
		}
		// OnBegin hears of the kept calls in the order they began, each
		// before its end, properly nested, and times never go back
		var begins, wantBegins []string
		var open []string
		var last uint64
		for _, e := range events {
			f := strings.Fields(e)
			var tm uint64
			fmt.Sscanf(f[2], "%d", &tm)
			if tm < last {
				t.Fatalf("resolution %d: %s after time %d", min, e, last)
			}
			last = tm
			name := f[1]
			if f[0] == "b" {
				begins = append(begins, name)
				open = append(open, name)
				continue
			}
			if len(open) == 0 || open[len(open)-1] != name {
				t.Fatalf("resolution %d: %s ends, open %v", min, e, open)
			}
			open = open[:len(open)-1]
		}
		sorted := append([]Call(nil), want...)
		byBegin(sorted)
		for _, c := range sorted {
			wantBegins = append(wantBegins, c.Func)
		}
		if strings.Join(begins, ",") != strings.Join(wantBegins, ",") || len(open) != 0 {
			t.Errorf("resolution %d: begins %v, want %v", min, begins, wantBegins)
		}
		var wantSelf uint64 // the kept bottom frames' instructions
		for _, c := range want {
			if c.Depth == 0 {
				wantSelf += c.EndInsn - c.BeginInsn
			}
		}
		gotCount := map[string]int{}
		var self uint64
		var walk func(n *Node)
		walk = func(n *Node) {
			gotCount[n.Name] += n.Count
			self += n.SelfInsn
			for _, c := range n.Children {
				walk(c)
			}
		}
		for _, th := range res.Tree.Children {
			for _, c := range th.Children {
				walk(c)
			}
		}
		for k, v := range gotCount {
			if v == 0 {
				delete(gotCount, k)
			}
		}
		if fmt.Sprint(gotCount) != fmt.Sprint(wantCount) || self != wantSelf {
			t.Errorf("resolution %d: tree counts %v, want %v; self instructions %d, want %d", min, gotCount, wantCount, self, wantSelf)
		}
		var folded, tree bytes.Buffer
		WriteFolded(&folded, res.Tree, false)
		WriteTree(&tree, res.Tree, "ns")
		var sum uint64
		for _, l := range strings.Split(strings.TrimSpace(folded.String()), "\n") {
			var v uint64
			fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v)
			sum += v
		}
		if sum != wantSelf || strings.Count(tree.String(), "\n") != 2+len(nonEmptyPaths(res.Tree)) {
			t.Errorf("resolution %d: folded weighs %d instructions, want %d; tree:\n%s", min, sum, wantSelf, tree.String())
		}
	}
}

// nonEmptyPaths lists the call paths with calls.
func nonEmptyPaths(root *Node) []string {
	var out []string
	var walk func(n *Node, p string)
	walk = func(n *Node, p string) {
		if n.Count == 0 {
			return
		}
		out = append(out, p+";"+n.Name)
		for _, c := range n.Children {
			walk(c, p+";"+n.Name)
		}
	}
	for _, th := range root.Children {
		for _, c := range th.Children {
			walk(c, th.Name)
		}
	}
	return out
}

// TestPerCPUTwoProcesses: two real programs (the test program at -O1,
// and at -O0 run with an argument: other code, other calls) take turns
// on one CPU, switched at their system calls, in a per-CPU user-mode
// trace with SWITCH_CPU_WIDE records. Each thread's calls are its own
// run's true calls (by the stack pointer, as in TestCallsOfRealProgram):
// the decoder reads each process's code from its own mappings, switched
// at the context switches, and each thread keeps its own stack.
func TestPerCPUTwoProcesses(t *testing.T) {
	a := synthesize(t)
	dir := t.TempDir()
	progB, err := ptsynth.BuildProgAs(dir, "prog0", "-O0")
	if err != nil {
		t.Fatal(err)
	}
	runB, err := ptsynth.Record(progB, []string{"x"}, ptsynth.AtSymbol(progB, "main"), 0)
	if err != nil {
		t.Fatal(err)
	}
	runs := []*ptsynth.Run{a.Run, runB}
	sw, err := ptsynth.PerCPU(runs, ptsynth.X86, ptsynth.Options{PSBPeriod: 512}, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	pieces := map[int]int{}
	for _, sl := range sw.Slices {
		pieces[sl.Run]++
	}
	if pieces[0] < 2 || pieces[1] < 2 {
		t.Fatalf("pieces per run %v: want each run to be switched out and back in", pieces)
	}
	in, err := ReadPerfData(sw.Perf)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Streams) != 1 || in.Streams[0].CPU != 3 || in.Streams[0].TID != -1 {
		t.Fatalf("streams %+v, want one per-CPU stream of cpu 3", in.Streams)
	}
	got := map[int32][]Call{}
	res, err := Analyze(in, Options{OnCall: func(c *Call) { got[c.Thread] = append(got[c.Thread], *c) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gaps != 0 || len(res.Threads) != 2 {
		t.Fatalf("%d gaps, threads %v (unfound %v)", res.Gaps, res.Threads, res.Unfound)
	}
	as := in.Sideband.AddressSpaces()
	for _, run := range runs {
		enc, err := ptsynth.Encode(run, ptsynth.X86, ptsynth.Options{})
		if err != nil {
			t.Fatal(err)
		}
		proc := as.Process(int32(run.PID))
		_, _, paths := proc.LoadImage(&symtab.Finder{})
		want := trueCalls(run, enc, NewProcSymbolizer(proc, paths, symtab.Options{}))
		g := got[int32(run.PID)]
		byBegin(g)
		byBegin(want)
		if len(g) != len(want) || len(want) < 300 {
			t.Fatalf("pid %d: %d calls, want %d", run.PID, len(g), len(want))
		}
		for i := range g {
			g, w := g[i], want[i]
			endOK := g.EndInsn == w.EndInsn || (g.EndReason == EndUnwound && g.EndInsn >= w.EndInsn && g.EndInsn <= w.EndInsn+16)
			if g.Func != w.Func || g.Depth != w.Depth || g.BeginInsn != w.BeginInsn || !endOK || g.Kind != w.Kind {
				t.Fatalf("pid %d call %d: got %s depth %d [%d,%d) %s/%s; want %s depth %d [%d,%d) %s", run.PID, i, g.Func, g.Depth, g.BeginInsn, g.EndInsn, g.Kind, g.EndReason,
					w.Func, w.Depth, w.BeginInsn, w.EndInsn, w.Kind)
			}
		}
	}
	// pt flow's image: one process of the two, chosen by pid
	if _, _, err := FlowImage(in, 0, 0, Options{}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("processes %d, %d ran on cpu 3", a.Run.PID, runB.PID)) {
		t.Errorf("FlowImage of two processes without pid: %v", err)
	}
	im, _, err := FlowImage(in, 0, int32(runB.PID), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf [16]byte
	first := runB.Steps[0].IP
	if n := im.Read(buf[:], first, intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}); n == 0 || !bytes.Equal(buf[:n], runB.Bytes(first)[:n]) {
		t.Errorf("FlowImage of pid %d: %x at %#x, want %x", runB.PID, buf[:n], first, runB.Bytes(first)[:16])
	}
	names := []string{res.Tree.Children[0].Name, res.Tree.Children[1].Name}
	if names[0] != fmt.Sprintf("prog %d", a.Run.PID) || names[1] != fmt.Sprintf("prog0 %d", runB.PID) {
		t.Errorf("threads %v", names)
	}
}

// TestAnalyzeNoTreeReaderAt: Options.NoTree builds no tree and changes
// nothing else (the calls begun and ended, in order, the gaps, the
// statistics); ReadPerfDataReaderAt reads the same input as ReadPerfData
// of the bytes, and its Close closes what it was given, once.
func TestAnalyzeNoTreeReaderAt(t *testing.T) {
	s := synthesize(t)
	run := func(in *Input, noTree bool) ([]string, *Result) {
		var got []string
		o := Options{NoTree: noTree,
			OnBegin: func(c *Call) { got = append(got, "begin "+c.Func) },
			OnCall:  func(c *Call) { got = append(got, fmt.Sprintf("end %+v", *c)) }}
		res, err := Analyze(in, o)
		if err != nil {
			t.Fatal(err)
		}
		return got, res
	}
	in, err := ReadPerfData(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	want, wres := run(in, false)
	closes := 0
	rin, err := ReadPerfDataReaderAt(bytes.NewReader(s.Perf), int64(len(s.Perf)), closerFunc(func() error { closes++; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	got, res := run(rin, true)
	rin.Close()
	rin.Close()
	if closes != 1 {
		t.Errorf("closed %d times, want once", closes)
	}
	if wres.Tree == nil || res.Tree != nil {
		t.Fatalf("tree %v with it, %v with NoTree", wres.Tree != nil, res.Tree != nil)
	}
	if len(want) < 100 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("NoTree from the ReaderAt: %d calls and begins, want the %d of the tree's run", len(got), len(want))
	}
	if res.Gaps != wres.Gaps || fmt.Sprint(res.Stats) != fmt.Sprint(wres.Stats) {
		t.Errorf("NoTree: gaps %d stats %+v; want %d %+v", res.Gaps, res.Stats, wres.Gaps, wres.Stats)
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
