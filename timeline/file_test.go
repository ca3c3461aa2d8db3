package timeline

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExpandInputs: a capture directory stands for its traces (detected
// by content: README.md is left out) and gives its clocks.json; "-" once;
// a missing path or a directory without traces is an error.
func TestExpandInputs(t *testing.T) {
	const capDir = "../testdata/capture"
	in, clocks, err := ExpandInputs([]string{capDir, "-", "../testdata/mmiotrace/e1000-probe.log"})
	want := []string{capDir + "/events.ndjson", capDir + "/mmio.log.zst", capDir + "/usb.pcapng", "-", "../testdata/mmiotrace/e1000-probe.log"}
	if err != nil || !slices.Equal(in, want) || clocks != capDir+"/clocks.json" {
		t.Fatalf("got %q, %q, %v; want %q", in, clocks, err, want)
	}
	if _, _, err := ExpandInputs([]string{"-", "-"}); !errors.Is(err, ErrStdinTwice) {
		t.Errorf("- twice: %v", err)
	}
	if _, c, err := ExpandInputs([]string{capDir, "nosuchfile"}); !errors.Is(err, fs.ErrNotExist) || c == "" {
		t.Errorf("missing file: %v, clocks %q (still the first directory's)", err, c)
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("not a trace\n"), 0o600)
	if _, _, err := ExpandInputs([]string{empty}); err == nil || !strings.Contains(err.Error(), "no trace in this directory") {
		t.Errorf("directory without traces: %v", err)
	}
}

// TestExportFile: one file holds exactly what Export writes, created
// 0600; the size warning comes with a UI limit under the file's size;
// --max-size splits into windows under the bound; a failed export leaves
// no file; an interrupted one keeps a valid trace.
func TestExportFile(t *testing.T) {
	const probe = "../testdata/mmiotrace/e1000-probe.log"
	dir := t.TempDir()
	out := filepath.Join(dir, "one.pftrace")
	res, err := ExportFile(context.Background(), []string{probe}, Options{}, FileOptions{Out: out, UILimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := Export(context.Background(), &want, []string{probe}, Options{}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want.Bytes()) || res.Split != nil || res.Inputs[0].Events != 11950 {
		t.Errorf("one file: %d bytes, want %d; split %v, %d events", len(got), want.Len(), res.Split, res.Inputs[0].Events)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v %v", fi.Mode(), err)
	}
	if w := res.SizeWarning(); !strings.HasPrefix(w, out+" is 0 MB: the Perfetto UI") {
		t.Errorf("size warning %q", w)
	}
	var sum bytes.Buffer
	res.WriteSummary(&sum, false)
	if !strings.HasPrefix(sum.String(), "wrote "+out+": 4 tracks, 0 slices, 11952 instants") {
		t.Errorf("summary %q", sum.String())
	}

	split := filepath.Join(dir, "split.pftrace")
	res, err = ExportFile(context.Background(), []string{probe}, Options{}, FileOptions{Out: split, MaxSize: 300 << 10})
	if err != nil || res.Split == nil || !res.Split.Split || res.SizeWarning() != "" || res.Written() != nil {
		t.Fatalf("split: %+v, %v", res, err)
	}
	ents, _ := os.ReadDir(DetailDir(split))
	for _, e := range ents {
		if fi, _ := e.Info(); fi.Size() > 300<<10 {
			t.Errorf("%s: %d bytes over the bound", e.Name(), fi.Size())
		}
	}
	if len(ents) != len(res.Split.Index.Windows)+1 {
		t.Errorf("%d files for %d windows", len(ents), len(res.Split.Index.Windows))
	}
	sum.Reset()
	res.WriteSummary(&sum, true)
	if !strings.Contains(sum.String(), `"kind":"timeline_window"`) {
		t.Errorf("NDJSON summary without windows: %s", sum.String())
	}

	bad := filepath.Join(dir, "bad.pftrace")
	if _, err := ExportFile(context.Background(), []string{"../testdata/capture/README.md"}, Options{}, FileOptions{Out: bad}); err == nil || !strings.HasPrefix(err.Error(), "timeline: ") {
		t.Errorf("not a trace: %v", err)
	}
	if _, err := os.Stat(bad); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed export left %s: %v", bad, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cut := filepath.Join(dir, "cut.pftrace")
	res, err = ExportFile(ctx, []string{probe}, Options{}, FileOptions{Out: cut})
	if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted {
		t.Fatalf("interrupted: %+v, %v", res, err)
	}
	data, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	decodeTrace(t, data) // a valid trace
}
