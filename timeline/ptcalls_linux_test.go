//go:build linux

package timeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/intelpt/ptsynth"
)

// TestPTCallsTrack: the calls of the synthesized trace of a real program
// become balanced nested slices on a thread track, named after the
// functions, one slice per call; protoc decodes the trace with
// Perfetto's proto.
func TestPTCallsTrack(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	s, err := ptsynth.SynthesizeProg(dir, 256)
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	s, err := ptsynth.SynthesizeProg(t.TempDir(), 256)
	if err != nil {
		t.Fatal(err)
	}
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
