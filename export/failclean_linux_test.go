package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFailedExportLeavesNoTemp: an export that fails while its tables
// are being written (here: out of file descriptors for the page files,
// as under a low 'ulimit -n') removes its temporary table files; the
// write error came out of a table's next, whose callers returned without
// aborting, and left a .tmp-* file per open table (review, session 12).
func TestFailedExportLeavesNoTemp(t *testing.T) {
	data, err := os.ReadFile("../../shared/testdata/usb/km003c-adc-1000hz.pcapng") // public, see its README
	if err != nil {
		t.Skip(err)
	}
	in := filepath.Join(t.TempDir(), "big.pcapng")
	if err := os.WriteFile(in, bytes.Repeat(data, 40), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	x, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	low := lim
	low.Cur = uint64(len(fds) + 24) // the input, two tables, a few page files
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	_, err = x.ExportPath(context.Background(), in)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatalf("export with %d file descriptors succeeded; the test needs it to fail", low.Cur)
	}
	t.Logf("export failed as wanted: %v", err)
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".tmp") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("a failed export left %v", left)
	}
}
