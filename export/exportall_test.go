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
	if len(said) != 1 {
		t.Errorf("rows said %q, want the first input's only", said)
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "captures", "*.parquet")); len(got) != 0 {
		t.Errorf("captures table written after a failed input: %v", got)
	}
}
