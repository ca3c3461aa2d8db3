//go:build linux

package timeline

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/intelpt/ptsynth"
	"github.com/iotap/iotap/intelpt/ptsynth/ptsynthtest"
)

// TestPTCallsTrack: the calls of the synthesized trace of a real program
// become balanced nested slices on a thread track, named after the
// functions, one slice per call; protoc decodes the trace with
// Perfetto's proto.
func TestPTCallsTrack(t *testing.T) {
	dir := t.TempDir()
	s := ptsynthtest.Prog(t, dir, 256)
	in, err := calls.ReadPerfData(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if _, err := calls.Analyze(in, calls.Options{OnBegin: func(c *calls.Call) { want = append(want, c.Func) }}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Merge(context.Background(), &out, NewPTCallsSources("perf.data", in, calls.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := decodeTrace(t, out.Bytes())
	checkSlicesNest(t, tr)
	var got []string
	for _, e := range tr.events {
		if e.typ == typeSliceBegin {
			got = append(got, e.name)
			if !strings.Contains(tr.path(e.track), "thread ") {
				t.Fatalf("slice %s on track %s", e.name, tr.path(e.track))
			}
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%d slices, want %d calls in order", len(got), len(want))
	}
	fib := 0
	for _, n := range got {
		if n == "fib" {
			fib++
		}
	}
	if fib != 177 || st.Inputs[0].Slices != int64(len(want)) {
		t.Errorf("%d fib slices, %d slices counted", fib, st.Inputs[0].Slices)
	}
	if text := protocDecode(t, out.Bytes()); !strings.Contains(text, `name: "twice_plus_one"`) && !strings.Contains(text, `"twice_plus_one"`) {
		t.Errorf("protoc's decoding lacks the function names")
	}
	_ = os.Remove

	// --pt-resolution: only the calls at least that long, still nested
	// (which calls those are is TestResolution's in intelpt/calls)
	var longest uint64
	var all int
	calls.Analyze(in, calls.Options{OnCall: func(c *calls.Call) {
		all++
		longest = max(longest, in.ToNS(c.End)-in.ToNS(c.Begin))
	}})
	o := calls.Options{Resolution: longest / 2}
	var kept []string
	o.OnBegin = func(c *calls.Call) { kept = append(kept, c.Func) }
	if _, err := calls.Analyze(in, o); err != nil {
		t.Fatal(err)
	}
	o.OnBegin = nil
	out.Reset()
	if _, err := Merge(context.Background(), &out, NewPTCallsSources("perf.data", in, o), Options{}); err != nil {
		t.Fatal(err)
	}
	tr = decodeTrace(t, out.Bytes())
	checkSlicesNest(t, tr)
	got = got[:0]
	for _, e := range tr.events {
		if e.typ == typeSliceBegin {
			got = append(got, e.name)
		}
	}
	if len(got) == 0 || len(got) >= all || strings.Join(got, ",") != strings.Join(kept, ",") {
		t.Errorf("resolution %d: slices %v, want the %d kept calls %v (of %d)", o.Resolution, got, len(kept), kept, all)
	}
}

// TestPTCallsCaptureDirMoved: an 'iotap pt capture' directory (trace,
// raw sideband, capture.json, mapped_files.json, binaries/ by build-id),
// moved to another place after the traced program itself was deleted,
// and decoded with an empty sysroot (the files are nowhere but in
// binaries/: as on another machine), gives the call track of the program:
// the slices are the calls of the perf.data of the same run, nested, and
// protoc decodes the trace.
func TestPTCallsCaptureDirMoved(t *testing.T) {
	s := ptsynthtest.Prog(t, t.TempDir(), 256)
	in, err := calls.ReadPerfData(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if _, err := calls.Analyze(in, calls.Options{OnBegin: func(c *calls.Call) { want = append(want, c.Func) }}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	os.Mkdir(dir, 0o700)
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
	if err := os.Remove(s.Prog); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Export(context.Background(), &out, []string{filepath.Join(moved, "thread.pt")},
		Options{PTCalls: &calls.Options{Finder: calls.Finder(t.TempDir(), nil)}})
	if err != nil {
		t.Fatal(err)
	}
	tr := decodeTrace(t, out.Bytes())
	checkSlicesNest(t, tr)
	var got []string
	for _, e := range tr.events {
		if e.typ == typeSliceBegin {
			got = append(got, e.name)
		}
	}
	if len(want) < 300 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%d slices, want the %d calls of the perf.data", len(got), len(want))
	}
	var skipped int64
	for _, i := range st.Inputs {
		skipped += i.Skipped
	}
	if skipped != 0 {
		t.Errorf("%d gaps", skipped)
	}
	if text := protocDecode(t, out.Bytes()); !strings.Contains(text, "twice_plus_one") {
		t.Errorf("protoc's decoding lacks the function names")
	}
}

// TestPTCallsOverview: split with a small bound, the overview of a
// perf.data read with its calls has, under "time per function", a counter
// of the time spent in each of the busiest functions (inclusive, per
// bucket); each, summed over the buckets, is the function's total of 'pt
// calls --json' (the sum of end - begin of its calls), and they are the
// functions with the most time. protoc decodes the overview.
func TestPTCallsOverview(t *testing.T) {
	s := ptsynthtest.Prog(t, t.TempDir(), 256)
	dir := t.TempDir()
	perf := filepath.Join(dir, "perf.data")
	if err := os.WriteFile(perf, s.Perf, 0o600); err != nil {
		t.Fatal(err)
	}
	// pt calls --json's totals per function
	in, err := calls.ReadPerfData(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	clk := calls.Clock{ToNS: in.ToNS}
	var js []byte
	if _, err := calls.Analyze(in, calls.Options{OnCall: func(c *calls.Call) { js = calls.AppendNDJSON(js, c, clk) }}); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(string(js)), "\n") {
		var c struct {
			Func     string  `json:"func"`
			BeginTSC uint64  `json:"begin_tsc"`
			EndTSC   uint64  `json:"end_tsc"`
			BeginNS  *uint64 `json:"begin_ns"`
			EndNS    *uint64 `json:"end_ns"`
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		if c.BeginNS != nil {
			want[c.Func] += float64(*c.EndNS - *c.BeginNS)
		} else {
			want[c.Func] += float64(c.EndTSC - c.BeginTSC)
		}
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return want[names[i]] > want[names[j]] })

	defer func(v int64) { minMaxSize = v }(minMaxSize)
	minMaxSize = 4 << 10
	out := filepath.Join(dir, "out.pftrace")
	st, err := ExportSplit(context.Background(), out, []string{perf}, Options{PTCalls: &calls.Options{}}, SplitOptions{MaxSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Split || len(st.Index.Windows) < 2 {
		t.Fatalf("not split: the detail fits, no overview")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	protocDecode(t, data)
	ov := decodeTrace(t, data)
	series := map[string][]dEvent{}
	for _, e := range ov.events {
		if p := ov.path(e.track); e.typ == typeCounter && strings.Contains(p, "/time per function/") {
			series[p] = append(series[p], e)
		}
	}
	shown := min(len(names), topRegisters)
	if len(series) != shown {
		t.Fatalf("%d time-per-function counters, want %d (of %d functions)", len(series), shown, len(names))
	}
	// the busiest functions (ties at the last place: any of them)
	least := want[names[shown-1]]
	got := map[string]bool{}
	for p, evs := range series {
		_, n, _ := strings.Cut(p, "/time per function/time per function ")
		n = strings.TrimSuffix(n, " time")
		got[n] = true
		if sum := math.Round(integrate(evs)); sum != want[n] {
			t.Errorf("%s: %.0f ns in the overview, pt calls --json %.0f", n, sum, want[n])
		}
		if want[n] < least {
			t.Errorf("%s (%.0f ns) shown, not one of the %d busiest (the least %.0f ns)", n, want[n], shown, least)
		}
	}
	for _, n := range names {
		if want[n] > least && !got[n] {
			t.Errorf("%s (%.0f ns) is one of the busiest but not shown", n, want[n])
		}
	}
	t.Logf("%d windows, %d functions, busiest %s %.0f ns", len(st.Index.Windows), len(names), names[0], want[names[0]])
}

// TestPTCallsSourcesCloseInput: the call track of a perf.data file read
// as it is decoded (calls.ReadPerfDataFile) closes the file once its
// streams are decoded; it stayed open until the process ended.
func TestPTCallsSourcesCloseInput(t *testing.T) {
	dir := t.TempDir()
	_, path := ptsynthtest.PerfData(t, dir, 64)
	isOpen := func() bool { // path among this process's open files
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		for _, e := range ents {
			if p, _ := os.Readlink("/proc/self/fd/" + e.Name()); p == path {
				return true
			}
		}
		return false
	}
	in, err := calls.ReadPerfDataFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !isOpen() {
		t.Fatal("ReadPerfDataFile holds no open file: the test checks nothing")
	}
	if _, err := Merge(context.Background(), io.Discard, NewPTCallsSources(path, in, calls.Options{}), Options{}); err != nil {
		t.Fatal(err)
	}
	// The last stream's goroutine closes the input after it sent its end.
	for deadline := time.Now().Add(10 * time.Second); isOpen(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still open after the merge: the input was not closed", path)
		}
	}
	runtime.KeepAlive(in) // not closed by its finalizer
}

// TestPTCallsBatchesReused: the decoder hands its events over in batches
// that come back to it once read and are refilled. With batches of 3
// events (each reused many times over while the timeline reads the
// others) the trace is byte for byte the one written with batches of
// 4,096 (this program's calls in one batch, none reused), and its slices
// are the calls in the order calls.Analyze begins them. (Under -race, a
// batch handed back while the timeline still reads it is a data race.)
func TestPTCallsBatchesReused(t *testing.T) {
	s := ptsynthtest.Prog(t, t.TempDir(), 256)
	track := func(batch int) []byte {
		defer func(b int) { ptCallsBatch = b }(ptCallsBatch)
		ptCallsBatch = batch
		in, err := calls.ReadPerfData(s.Perf)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := Merge(context.Background(), &out, NewPTCallsSources("perf.data", in, calls.Options{}), Options{}); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	whole := track(4096)
	small := track(3)
	if !bytes.Equal(small, whole) {
		t.Fatalf("batches of 3: %d bytes, differ from batches of 4,096 (%d bytes)", len(small), len(whole))
	}
	in, err := calls.ReadPerfData(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if _, err := calls.Analyze(in, calls.Options{OnBegin: func(c *calls.Call) { want = append(want, c.Func) }}); err != nil {
		t.Fatal(err)
	}
	tr := decodeTrace(t, small)
	checkSlicesNest(t, tr)
	var got []string
	for _, e := range tr.events {
		if e.typ == typeSliceBegin {
			got = append(got, e.name)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%d slices, want the %d calls in begin order", len(got), len(want))
	}
	// a begin and an end per call: one batch of 4,096, many of 3
	if n := 2 * len(want); n > 4096 || n < 10*3*ptCallsBatches {
		t.Errorf("%d events: want at most a batch of 4,096 and many batches of 3", n)
	}
}

// TestPTPerfDataStdinSpooled: a perf.data on standard input (here a
// pipe) is copied to a temporary file and read from it as a perf.data
// file is: the packet and call tracks and the summary equal those of the
// same file named on the command line (the path of every earlier test),
// the copy is removed from $TMPDIR at once, and it is closed once both
// tracks are done (no descriptor to it left open).
func TestPTPerfDataStdinSpooled(t *testing.T) {
	dir := t.TempDir()
	s, path := ptsynthtest.PerfData(t, dir, 64)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	spools := func() (n int) { // descriptors open to a spooled copy
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if p, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.Contains(p, "iotap-timeline-") {
				n++
			}
		}
		return n
	}
	// Open: the streams are read from the copy as they are decoded (they
	// were held in memory, read whole); the sources close it.
	srcs, err := Open("-", Options{Stdin: bytes.NewReader(s.Perf)})
	if err != nil {
		t.Fatal(err)
	}
	if ps, ok := srcs[0].(*ptSource); !ok || ps.br == nil || ps.eof {
		t.Fatalf("source %T: a stream held in memory, not read from the copy", srcs[0])
	}
	if n := spools(); n != 1 {
		t.Fatalf("%d descriptors to a spooled copy while the sources are open, want 1", n)
	}
	for _, src := range srcs {
		src.Close()
	}
	if n := spools(); n != 0 {
		t.Fatalf("%d descriptors to a spooled copy after the sources are closed", n)
	}
	for _, withCalls := range []bool{false, true} {
		opt := Options{}
		if withCalls {
			opt.PTCalls = &calls.Options{}
		}
		var want bytes.Buffer
		wst, err := Export(context.Background(), &want, []string{path}, opt)
		if err != nil {
			t.Fatal(err)
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			pw.Write(s.Perf)
			pw.Close()
		}()
		opt.Stdin = pr
		var got bytes.Buffer
		gst, err := Export(context.Background(), &got, []string{"-"}, opt)
		pr.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(gst.Inputs) != len(wst.Inputs) || (withCalls && len(gst.Inputs) < 2) {
			t.Fatalf("calls %v: %d inputs from stdin, %d from the file", withCalls, len(gst.Inputs), len(wst.Inputs))
		}
		for i := range gst.Inputs {
			g, w := *gst.Inputs[i], *wst.Inputs[i]
			g.Path, w.Path, g.BytesRead, w.BytesRead = "", "", 0, 0
			if g != w {
				t.Errorf("calls %v: input %d from stdin %+v, from the file %+v", withCalls, i, g, w)
			}
		}
		// the trace names its input: the same bytes once the name is the same
		if g := bytes.ReplaceAll(got.Bytes(), []byte(`"-"`), []byte(`"`+path+`"`)); !bytes.Equal(g, want.Bytes()) && !bytes.Equal(got.Bytes(), want.Bytes()) {
			tg, tw := decodeTrace(t, got.Bytes()), decodeTrace(t, want.Bytes())
			if len(tg.events) != len(tw.events) {
				t.Fatalf("calls %v: %d events from stdin, %d from the file", withCalls, len(tg.events), len(tw.events))
			}
			for i := range tg.events {
				if ge, we := tg.events[i], tw.events[i]; ge.typ != we.typ || ge.ts != we.ts || ge.name != we.name {
					t.Fatalf("calls %v: event %d from stdin %+v, from the file %+v", withCalls, i, ge, we)
				}
			}
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("calls %v: %d files left in $TMPDIR: %v", withCalls, len(ents), ents[0].Name())
		}
		// the call track's goroutine closes its handle after its end
		for deadline := time.Now().Add(10 * time.Second); spools() > 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("calls %v: the spooled copy is still open after the merge", withCalls)
			}
		}
	}
}
