package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestExportPTCaptureDir: an 'iotap pt capture' directory (capture.json
// and one buffer per CPU, here a trace of libipt's corpus without
// sideband) is one input: pt_stats has one row per buffer with the
// statistics intelpt computes for its file; the calls cannot be followed
// without context switches, which is loss in the captures row, not an
// error.
func TestExportPTCaptureDir(t *testing.T) {
	trace, err := os.ReadFile("../../shared/testdata/intelpt-libipt/apl11.pt")
	if err != nil {
		t.Skip("the libipt corpus is not in ../../shared/testdata/intelpt-libipt")
	}
	dir := filepath.Join(t.TempDir(), "ptcap")
	os.Mkdir(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "cpu0.pt"), trace, 0o600); err != nil {
		t.Fatal(err)
	}
	ci := &intelpt.CaptureInfo{Tool: "test", Mode: "per-cpu", CPUs: []int{0},
		Buffers: []intelpt.CaptureBuffer{{CPU: 0, File: "cpu0.pt", Bytes: int64(len(trace))}}}
	if err := intelpt.WriteCaptureInfo(dir, ci); err != nil {
		t.Fatal(err)
	}
	x, err := New(Options{Dir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := x.ExportPath(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	want := intelpt.ComputeStats(trace, ci.DecoderConfig())
	if len(rows) != 1 || rows[0].Source != "pt" || rows[0].Format != "pt capture" || rows[0].Records != want.Packets ||
		rows[0].InputBytes != int64(len(trace)) || !strings.Contains(rows[0].Loss, "calls not decoded") || rows[0].Complete {
		t.Errorf("captures row %+v; want one pt capture of %d packets, %d bytes, calls not decoded", rows, want.Packets, len(trace))
	}
	files, _ := filepath.Glob(filepath.Join(x.opt.Dir, TablePTStats, "*.parquet"))
	calls, _ := filepath.Glob(filepath.Join(x.opt.Dir, TablePTCalls, "*.parquet"))
	if len(files) != 1 || len(calls) != 0 {
		t.Errorf("pt_stats files %v, pt_calls files %v; want one and none", files, calls)
	}
}
