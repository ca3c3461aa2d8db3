package report

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
