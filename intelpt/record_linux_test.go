package intelpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRecord: without PT, Record fails with ErrNotSupported and creates
// nothing; with PT (and the right to use it), a 20 ms capture of CPU 0
// leaves a capture directory that reads back.
func TestRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := Record(ctx, dir, RecordOptions{Trace: TraceConfig{CPUs: []int{0}, Chunks: 4, Order: 2}})
	if _, serr := Supported(); serr != nil {
		if !errors.Is(err, ErrNotSupported) {
			t.Fatalf("without PT: %v, want ErrNotSupported", err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("without PT the directory was created (%v)", err)
		}
		return
	}
	if err != nil {
		t.Skipf("PT present but not usable here: %v", err)
	}
	ci, err := ReadCaptureInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ci.Buffers) != 1 || ci.Buffers[0].CPU != 0 || ci.Lost != (len(res.Lost) > 0) {
		t.Errorf("capture.json %+v, result %+v", ci, res)
	}
	for _, b := range ci.Buffers {
		fi, err := os.Stat(filepath.Join(dir, b.File))
		if err != nil || fi.Size() != b.Bytes || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want %d bytes, mode 0600", b.File, fi, err, b.Bytes)
		}
	}
}

// TestRecordResultSummary: a line per buffer file ("cpuN", "thread" in
// per-thread mode, BufferFileName) with its bytes, then only the mapped
// files that could not be read, after the prefix.
func TestRecordResultSummary(t *testing.T) {
	r := &RecordResult{Info: &CaptureInfo{Buffers: []CaptureBuffer{{CPU: 0, Bytes: 4096}, {CPU: 3, Bytes: 0}}},
		Files: []MappedFile{{Path: "/bin/true"}, {Path: "/gone", Error: "no such file"}}}
	var b strings.Builder
	r.WriteSummary(&b, "pt capture: ")
	if want := "cpu0: 4096 bytes of trace\ncpu3: 0 bytes of trace\npt capture: /gone: no such file\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	(&RecordResult{Info: &CaptureInfo{Buffers: []CaptureBuffer{{CPU: -1, Bytes: 7}}}}).WriteSummary(&b, "")
	if b.String() != "thread: 7 bytes of trace\n" {
		t.Errorf("per-thread: %q", b.String())
	}
}
