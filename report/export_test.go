package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/timeline"
)

// TestWriteTimeline: the report's traces go into one Perfetto trace, each
// capture directory's clocks.json aligning its own traces (the offsets
// are the clocks file's); what was done is told in the report's words;
// warnings of several inputs are folded unless Verbose.
func TestWriteTimeline(t *testing.T) {
	r, err := Build(context.Background(), []string{"../testdata/capture", "../testdata/mmiotrace/e1000-probe.log"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "all.pftrace")
	var w bytes.Buffer
	var warned []string
	res, err := r.WriteTimeline(context.Background(), &w, TimelineOptions{Out: out, Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatal(err)
	}
	text := w.String()
	if !strings.HasPrefix(text, "\n== timeline: "+out+"\nclocks: ../testdata/capture/clocks.json (the traces of ../testdata/capture)\nwrote "+out+": ") {
		t.Errorf("text:\n%s", text)
	}
	offsets := map[string]int64{"usb": -1795291775000000050, "mmio": -20485622, "events": -21234264}
	for _, in := range res.Inputs {
		if strings.HasPrefix(in.Path, "../testdata/capture/") {
			if !in.Aligned || in.OffsetNS != offsets[string(in.Kind)] {
				t.Errorf("%s: aligned %v, offset %d; want %d from clocks.json", in.Path, in.Aligned, in.OffsetNS, offsets[string(in.Kind)])
			}
		} else if in.Kind != "markers" && in.Aligned {
			t.Errorf("%s aligned by another directory's clocks.json", in.Path)
		}
	}

	// An exporter that warns the same of every input: folded into one line.
	var gotInputs []string
	export := func(_ context.Context, inputs []string, opt timeline.Options) (*timeline.FileResult, error) {
		gotInputs = inputs
		for _, in := range inputs {
			opt.Warn(in + ": no events")
		}
		return timeline.ExportFile(context.Background(), inputs[:1], opt, timeline.FileOptions{Out: out})
	}
	warned = nil
	w.Reset()
	if _, err := r.WriteTimeline(context.Background(), &w, TimelineOptions{Out: out, ClocksFile: "c.json", Export: export, Warn: func(s string) { warned = append(warned, s) }}); err != nil {
		t.Fatal(err)
	}
	if len(gotInputs) != 4 || !strings.Contains(w.String(), "clocks: c.json (all inputs)\n") {
		t.Errorf("inputs %q, text:\n%s", gotInputs, w.String())
	}
	if want := []string{"4 inputs: no events (-v lists them)"}; !slices.Equal(warned, want) {
		t.Errorf("warnings %q, want %q", warned, want)
	}
	warned = nil
	if _, err := r.WriteTimeline(context.Background(), &w, TimelineOptions{Out: out, Verbose: true, Export: export, Warn: func(s string) { warned = append(warned, s) }}); err != nil || len(warned) != 4 {
		t.Errorf("verbose: %q, %v", warned, err)
	}
}

// TestOutputKind: the extensions of each kind, in any case; others none.
func TestOutputKind(t *testing.T) {
	for path, want := range map[string]string{"a/r.html": OutputHTML, "R.HTM": OutputHTML, "t.pftrace": OutputPerfetto, "t.perfetto-trace": OutputPerfetto,
		"r.json": OutputJSON, "r.NDJSON": OutputJSON, "r.txt": "", "html": "", "r.html.gz": ""} {
		if got := OutputKind(path); got != want {
			t.Errorf("OutputKind(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestWriteTimelineWindowNamesInputs: with a window (report --from) the
// traces are read from their cuts in a temporary directory, but the
// Perfetto trace and a split timeline's index.json name the user's files
// (a .zst log with its suffix), never the cuts.
func TestWriteTimelineWindowNamesInputs(t *testing.T) {
	spec, err := timerange.ParseSpec("0.1", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), []string{"../testdata/capture"}, Options{Window: spec})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := t.TempDir()
	one, split := filepath.Join(dir, "one.pftrace"), filepath.Join(dir, "split.pftrace")
	if _, err := r.WriteTimeline(context.Background(), io.Discard, TimelineOptions{Out: one}); err != nil {
		t.Fatal(err)
	}
	export := func(ctx context.Context, inputs []string, opt timeline.Options) (*timeline.FileResult, error) {
		return timeline.ExportFile(ctx, inputs, opt, timeline.FileOptions{Out: split, MaxSize: timeline.MinMaxSize})
	}
	res, err := r.WriteTimeline(context.Background(), io.Discard, TimelineOptions{Out: split, Export: export})
	if err != nil || res.Split == nil || res.Split.Index == nil {
		t.Fatalf("split: %v, %v", res, err)
	}
	b, err := os.ReadFile(one)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"../testdata/capture/usb.pcapng (usbmon pcapng)", "../testdata/capture/mmio.log.zst (mmiotrace log)",
		"../testdata/capture/events.ndjson (user_events NDJSON)", "MMIO mmio.log.zst"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the trace lacks %q", want)
		}
	}
	ov, _ := os.ReadFile(split)
	for name, b := range map[string][]byte{"trace": b, "overview": ov} {
		if bytes.Contains(b, []byte("iotap-window-")) {
			t.Errorf("the %s names a cut: %q", name, regexp.MustCompile(`[^\x00-\x1f]*iotap-window-[^\x00-\x1f]*`).Find(b))
		}
	}
	for _, in := range res.Split.Index.Inputs {
		if !strings.HasPrefix(in.Path, "../testdata/capture/") {
			t.Errorf("index.json names input %q", in.Path)
		}
	}
}

// TestWriteOutput: the HTML page links the timeline written with it
// (relative to the page), or the split timeline found among the inputs
// when none was written; the NDJSON output is WriteJSON's; Perfetto is
// not written here. ByteProgress counts the sizes of the traces before
// the current one.
func TestWriteOutput(t *testing.T) {
	var status []string
	var done []int64
	progress := ByteProgress(func(d int64, s string) { done, status = append(done, d), append(status, s) })
	r, err := Build(context.Background(), []string{"../testdata/capture"}, Options{Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var sizes []int64
	for _, tr := range r.Traces {
		fi, err := os.Stat(tr.Path)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	if len(done) != 3 || done[0] != 0 || done[1] != sizes[0] || done[2] != sizes[0]+sizes[1] || status[1] != "trace 2: "+r.Traces[1].Name {
		t.Errorf("progress %v %q; sizes %v", done, status, sizes)
	}
	// Standard input's size is unknown: it adds nothing, not the size of
	// the trace before it again.
	done = nil
	progress = ByteProgress(func(d int64, s string) { done = append(done, d) })
	for _, tr := range []*Trace{r.Traces[0], {Path: "-", Name: "-"}, r.Traces[1]} {
		progress(tr)
	}
	if len(done) != 3 || done[0] != 0 || done[1] != sizes[0] || done[2] != sizes[0] {
		t.Errorf("progress with stdin %v; sizes %v", done, sizes)
	}
	var page, js, want bytes.Buffer
	tl := &timeline.FileResult{Out: "out/t.pftrace"}
	if err := r.WriteOutput(&page, OutputHTML, "out/sub/r.html", tl, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<a href="../t.pftrace">../t.pftrace</a>`) {
		t.Errorf("the page does not link ../t.pftrace")
	}
	page.Reset()
	if err := r.WriteOutput(&page, OutputHTML, "r.html", &timeline.FileResult{Out: "-"}, HTMLOptions{}); err != nil || strings.Contains(page.String(), `id="timeline"`) {
		t.Errorf("a timeline on stdout is linked: %v", err)
	}
	if err := r.WriteOutput(&js, OutputJSON, "r.json", tl, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	r.WriteJSON(&want)
	if js.String() != want.String() {
		t.Errorf("NDJSON output differs from WriteJSON's")
	}
	if err := r.WriteOutput(io.Discard, OutputPerfetto, "t.pftrace", nil, HTMLOptions{}); err == nil {
		t.Errorf("Perfetto through WriteOutput: no error")
	}
	if OutputTitle(OutputHTML) != "HTML report" || OutputTitle(OutputJSON) != "NDJSON report" {
		t.Errorf("titles %q %q", OutputTitle(OutputHTML), OutputTitle(OutputJSON))
	}
}

// TestWriteFiles: the Perfetto trace is written first and the HTML page
// in another directory links it relative to itself; the NDJSON file is
// WriteJSON's; each file is private (0600) and told with its size; a
// file over one of the traces is refused and nothing is written over it.
func TestWriteFiles(t *testing.T) {
	r, err := Build(context.Background(), []string{"../testdata/capture"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "html"), 0o700)
	paths := []string{filepath.Join(dir, "html", "r.html"), filepath.Join(dir, "r.json"), filepath.Join(dir, "t.pftrace")}
	var w bytes.Buffer
	if err := r.WriteFiles(context.Background(), &w, paths, []string{OutputHTML, OutputJSON, OutputPerfetto}, FileOptions{}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(paths[0])
	js, _ := os.ReadFile(paths[1])
	var want bytes.Buffer
	r.WriteJSON(&want)
	if !bytes.Contains(page, []byte(`href="../t.pftrace"`)) || !bytes.Equal(js, want.Bytes()) {
		t.Errorf("the page does not link ../t.pftrace, or the NDJSON differs")
	}
	text := w.String()
	if i, j := strings.Index(text, "== timeline: "+paths[2]), strings.Index(text, "== HTML report: "); i < 0 || j < i {
		t.Errorf("the timeline is not written first:\n%s", text)
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v", p, fi, err)
			continue
		}
		if !strings.HasSuffix(p, ".pftrace") && !strings.Contains(text, fmt.Sprintf(": %s, %d bytes\n", p, fi.Size())) {
			t.Errorf("%s (%d bytes) not told:\n%s", p, fi.Size(), text)
		}
	}
	before, _ := os.ReadFile("../testdata/capture/events.ndjson")
	err = r.WriteFiles(context.Background(), io.Discard, []string{"../testdata/capture/events.ndjson"}, []string{OutputJSON}, FileOptions{})
	after, _ := os.ReadFile("../testdata/capture/events.ndjson")
	if !errors.Is(err, outfile.ErrSameFile) || !bytes.Equal(before, after) {
		t.Errorf("over an input: %v", err)
	}
}
