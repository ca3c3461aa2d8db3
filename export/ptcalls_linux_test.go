//go:build linux

package export

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/intelpt/ptsynth/ptsynthtest"
)

// TestExportPTCallsBatches: pt_calls' optional ns columns point into one
// array of the rows of a batch, by slot, not into an allocation per row.
// Exported in batches of 5 rows (each slot reused many times over), the
// rows read back with parquet-go equal those of batches of 1,024 (this
// program's calls in one batch, no slot reused), and every call has its
// times in ns (the perf.data has TIME_CONV). The values themselves are
// checked against 'pt calls --json' with DuckDB by cmd/iotap's
// TestExportPTMatchesCLI.
func TestExportPTCallsBatches(t *testing.T) {
	dir := t.TempDir()
	_, data := ptsynthtest.PerfData(t, dir, 256)
	export := func(batch int) []PTCallRow {
		defer func(b int) { batchRows = b }(batchRows)
		batchRows = batch
		x, err := New(Options{Dir: filepath.Join(t.TempDir(), "out")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.ExportPath(context.Background(), data); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(x.opt.Dir, TablePTCalls, "*.parquet"))
		if len(files) != 1 {
			t.Fatalf("pt_calls files %v, want one", files)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := readAll[PTCallRow](t, b)
		return rows
	}
	whole := export(1024)
	small := export(5)
	if len(whole) > 1024 || len(whole) < 10*5 {
		t.Fatalf("%d calls: want at most a batch of 1,024 and many batches of 5", len(whole))
	}
	if len(small) != len(whole) {
		t.Fatalf("batches of 5: %d rows, batches of 1,024: %d", len(small), len(whole))
	}
	for i := range whole {
		w, g := whole[i], small[i]
		if w.BeginNS == nil || w.EndNS == nil || w.SelfNS == nil || g.BeginNS == nil || g.EndNS == nil || g.SelfNS == nil {
			t.Fatalf("row %d: a null ns column: %+v, %+v", i, w, g)
		}
		if *w.BeginNS > *w.EndNS || *w.SelfNS > *w.EndNS-*w.BeginNS {
			t.Errorf("row %d: begin %d end %d self %d ns", i, *w.BeginNS, *w.EndNS, *w.SelfNS)
		}
		if *g.BeginNS != *w.BeginNS || *g.EndNS != *w.EndNS || *g.SelfNS != *w.SelfNS {
			t.Fatalf("row %d: batches of 5 %d..%d self %d ns, of 1,024 %d..%d self %d", i,
				*g.BeginNS, *g.EndNS, *g.SelfNS, *w.BeginNS, *w.EndNS, *w.SelfNS)
		}
		g.BeginNS, g.EndNS, g.SelfNS, w.BeginNS, w.EndNS, w.SelfNS = nil, nil, nil, nil, nil, nil
		if g != w {
			t.Fatalf("row %d: batches of 5 %+v, of 1,024 %+v", i, g, w)
		}
	}
}
