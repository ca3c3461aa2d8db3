package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestExportRawPTStreamed: a raw trace is read as a stream by export (its
// statistics computed as it is read, so that memory does not grow with
// the trace); its pt_stats row equals intelpt.ComputeStats of the whole
// file in memory. The trace is libipt's corpus streams end to end,
// repeated past 3 MiB: decoding errors, overflows, timing packets, and
// packets across the reader's 1 MiB buffer.
func TestExportRawPTStreamed(t *testing.T) {
	traces, _ := filepath.Glob("../../shared/testdata/intelpt-libipt/*.pt")
	if len(traces) == 0 {
		t.Skip("the libipt corpus is not in ../../shared/testdata/intelpt-libipt")
	}
	var data []byte
	for len(data) < 3<<20 {
		for _, p := range traces {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, b...)
		}
	}
	path := filepath.Join(t.TempDir(), "big.pt")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := New(Options{Dir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	caps, err := x.ExportPath(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var file string
	for _, f := range x.Files() {
		if strings.Contains(f, TablePTStats) {
			file = f
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := readAll[PTStatsRow](t, b)
	if len(rows) != 1 {
		t.Fatalf("%d pt_stats rows", len(rows))
	}
	r, st := rows[0], intelpt.ComputeStats(data, intelpt.Config{})
	if st.Errors == 0 || st.Overflows == 0 || !st.HaveTime {
		t.Fatalf("the trace has %d errors, %d overflows, time %v: not the mix this test needs", st.Errors, st.Overflows, st.HaveTime)
	}
	if r.Bytes != st.Bytes || r.Packets != st.Packets || r.PSBs != st.PSBs || r.Overflows != st.Overflows ||
		r.Errors != st.Errors || r.SkippedBytes != st.SkippedBytes || r.Truncated != st.Truncated ||
		r.FirstTSC == nil || *r.FirstTSC != st.FirstTSC || *r.LastTSC != st.LastTSC ||
		r.PSBGapMax == nil || *r.PSBGapMax != st.PSBGapMax || *r.PSBGapMin != st.PSBGapMin {
		t.Fatalf("pt_stats %+v, want %+v", r, st)
	}
	for _, k := range intelpt.Kinds() {
		if r.Kinds[k.String()] != st.Count(k) {
			t.Errorf("%s: %d packets, want %d", k, r.Kinds[k.String()], st.Count(k))
		}
	}
	// The bytes the decoding errors skipped are loss, in pt stats' words.
	if want := path + ": " + st.Loss(); len(caps) != 1 || !strings.Contains(caps[0].Loss, want) {
		t.Errorf("captures rows %+v: want the loss %q", caps, want)
	}
}

// TestExportRawPTNotATrace: a file taken for a raw trace that holds no PSB
// (here a gzip'd trace: export does not decompress raw PT) is refused as
// pt stats refuses it, instead of exported as a trace of 0 packets.
func TestExportRawPTNotATrace(t *testing.T) {
	traces, _ := filepath.Glob("../../shared/testdata/intelpt-libipt/*.pt")
	if len(traces) == 0 {
		t.Skip("the libipt corpus is not in ../../shared/testdata/intelpt-libipt")
	}
	b, err := os.ReadFile(traces[0])
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	path := filepath.Join(t.TempDir(), "t.pt.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	x, err := New(Options{Dir: out})
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.ExportPath(context.Background(), path)
	if !errors.Is(err, intelpt.ErrNoPSB) || !strings.Contains(err.Error(), fmt.Sprintf("no PSB in %d bytes", gz.Len())) {
		t.Fatalf("err = %v, want ErrNoPSB naming the %d bytes", err, gz.Len())
	}
	for _, f := range x.Files() {
		if strings.Contains(f, TablePTStats) {
			t.Errorf("%s written for a file that is not a trace", f)
		}
	}
}

// TestExportPTCutTrace: a raw trace that ends inside a packet is loss in
// its captures row, named with the packet's offset as pt stats, pt flow
// and pt calls name it, and pt_stats says truncated. The oracle is
// libipt's ptdump: its listing of call_direct-ret_compressed has a FUP at
// 0x1c and a packet at 0x1f, so the first 0x1d bytes end 1 byte into the
// FUP. Before, the row said "truncated tail" without where.
func TestExportPTCutTrace(t *testing.T) {
	full, err := os.ReadFile("../intelpt/testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.pt")
	if err := os.WriteFile(path, full[:0x1d], 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := New(Options{Dir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	caps, err := x.ExportPath(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if want := path + ": trace ends inside a packet at offset 0x1c (last 1 bytes)"; len(caps) != 1 || caps[0].Loss != want || !caps[0].Truncated {
		t.Errorf("captures rows %+v: want the loss %q", caps, want)
	}
}

// TestExportAllNamesCutTraceOnce: ExportAll's "FILE: LOSS" for a raw
// trace names the file once: its row's loss names it already, as pt
// stats names the stream (intelpt.StatsLoss).
// Before: "FILE: FILE: trace ends inside a packet ...".
func TestExportAllNamesCutTraceOnce(t *testing.T) {
	full, err := os.ReadFile("../intelpt/testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.pt")
	if err := os.WriteFile(path, full[:0x1d], 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := New(Options{Dir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	lost, err := x.ExportAll(context.Background(), []string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{path + ": trace ends inside a packet at offset 0x1c (last 1 bytes)"}; !slices.Equal(lost, want) {
		t.Errorf("lost %q, want %q", lost, want)
	}
}
