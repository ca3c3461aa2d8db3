package export_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/iotap/iotap/export"
)

// TestExportAll: the inputs are exported in order, each row reported as
// String says it; the loss is the one the log's "Lost N events." line
// records, named by its file; the captures table is written at the end,
// and not when an input fails.
func TestExportAll(t *testing.T) {
	const kinds, bind = "../mmiotrace/testdata/kinds.log", "../mmiotrace/testdata/e1000-bind.log"
	b, err := os.ReadFile(kinds)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Lost (\d+) events\.`).FindSubmatch(b)
	if m == nil {
		t.Fatal("kinds.log records no loss")
	}
	dir := t.TempDir()
	x, err := export.New(export.Options{Dir: dir, Identity: export.Identity{Host: "lab1"}})
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	lost, err := x.ExportAll(context.Background(), []string{kinds, bind}, func(r export.CaptureRow) { said = append(said, r.String()) })
	if err != nil {
		t.Fatal(err)
	}
	if len(said) != 2 || !strings.HasPrefix(said[0], kinds+": mmio mmiotrace, ") || !strings.HasPrefix(said[1], bind+": mmio mmiotrace, ") {
		t.Errorf("rows said %q, want one per input in order", said)
	}
	if want := kinds + ": the log records " + string(m[1]) + " events lost by the kernel"; len(lost) != 1 || lost[0] != want {
		t.Errorf("lost %q, want [%q]", lost, want)
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "captures", "*.parquet")); len(got) != 2 {
		t.Errorf("captures table: %v, want a file per capture", got)
	}

	dir = t.TempDir()
	if x, err = export.New(export.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	said = nil
	if _, err := x.ExportAll(context.Background(), []string{bind, "nosuchfile.log", kinds}, func(r export.CaptureRow) { said = append(said, r.String()) }); err == nil {
		t.Error("a missing input is not an error")
	}
	if len(said) != 0 || len(x.Files()) != 0 {
		t.Errorf("rows said %q, %d files written; want none: every input is found before any table is written", said, len(x.Files()))
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "captures", "*.parquet")); len(got) != 0 {
		t.Errorf("captures table written after a failed input: %v", got)
	}
}

// An input that is refused (no trace, missing) leaves no output
// directory behind; a file where the directory should be is refused.
func TestExportRefusedCreatesNothing(t *testing.T) {
	tmp := t.TempDir()
	notes := filepath.Join(tmp, "notes.txt")
	os.WriteFile(notes, []byte("hello\n"), 0o600)
	for _, in := range []string{notes, filepath.Join(tmp, "missing.log")} {
		dir := filepath.Join(tmp, "out", "pq")
		x, err := export.New(export.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.ExportAll(context.Background(), []string{in}, nil); err == nil {
			t.Errorf("%s: exported", in)
		}
		if _, err := os.Lstat(filepath.Join(tmp, "out")); err == nil {
			t.Errorf("%s: the output directory was created", in)
		}
	}
	if _, err := export.New(export.Options{Dir: notes}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as the directory: %v", err)
	}
	dir := filepath.Join(tmp, "new", "pq")
	x, _ := export.New(export.Options{Dir: dir})
	if _, err := x.ExportAll(context.Background(), []string{"../mmiotrace/testdata/kinds.log"}, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the directory was not created with the first file: %v", err)
	}
}
