//go:build linux

package mmiotrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestSuggestBufferKB(t *testing.T) {
	for _, tc := range []struct {
		res  CaptureResult
		want int
	}{
		{CaptureResult{BufferKB: 4, LostMarks: 1564}, 256},  // 4 + 98 KiB, doubled, rounded up
		{CaptureResult{BufferKB: 1408, Overruns: 10}, 4096}, // tiny loss: at least double
		{CaptureResult{BufferKB: 0, LostMarks: 1}, 4},       // unknown size
		{CaptureResult{BufferKB: 1024, LostMarks: 100000}, 16384},
	} {
		if got := tc.res.SuggestBufferKB(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.res, got, tc.want)
		}
	}
}

func TestOpenFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "marks")
	f, created, err := openFIFO(p)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	f.Close()
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("fifo mode %v %v", fi.Mode(), err)
	}
	f, created, err = openFIFO(p)
	if err != nil || created {
		t.Fatalf("reuse: %v %v", created, err)
	}
	f.Close()
	reg := filepath.Join(dir, "file")
	os.WriteFile(reg, nil, 0o600)
	if _, _, err := openFIFO(reg); err == nil {
		t.Error("regular file accepted as marker fifo")
	}
}

func TestCopyLogCountsLost(t *testing.T) {
	in := "VERSION 20070824\nMARK 0.000000 Lost 5 events.\nR 4 1.000000 1 0x1 0x2 0x0 0\nMARK 0.000000 Lost 7 events.\n"
	var out strings.Builder
	st := copyLog(&out, iotest.OneByteReader(strings.NewReader(in)), nil)
	if st.err != nil || out.String() != in || st.lines != 4 || st.lost != 12 || st.bytes != int64(len(in)) {
		t.Fatalf("%+v", st)
	}
}
