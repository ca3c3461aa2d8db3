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
// The limit is raised a descriptor at a time from the open ones until the
// export succeeds: every failure must leave nothing, and one of them must
// be a page file's (the table's writer failing).
func TestFailedExportLeavesNoTemp(t *testing.T) {
	in := km40(t)
	pageFailures := 0
	for extra := 1; ; extra++ {
		dir := t.TempDir()
		err := exportWithFDs(t, in, dir, extra)
		if err == nil {
			t.Logf("export succeeded with %d descriptors more than the test's", extra)
			break
		}
		if extra > 64 {
			t.Fatalf("export with %d descriptors more than the test's: %v", extra, err)
		}
		if strings.Contains(err.Error(), ".tmp-pages") {
			pageFailures++
		}
		var left []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".tmp") {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("an export failed with %d more descriptors (%v) left %v", extra, err, left)
		}
	}
	if pageFailures == 0 {
		t.Errorf("no export failed at a page file: the case is not tested")
	}
}

// TestExportFewDescriptors: a USB export (usb_events, usb_transfers,
// captures) needs a descriptor per table for its pages, not one per
// column: it succeeds with 12 descriptors besides the test's own, as it
// did before the page files; with a file per column (session 12) it took
// about 60, and 'ulimit -n 64' made it fail.
func TestExportFewDescriptors(t *testing.T) {
	in := km40(t)
	if err := exportWithFDs(t, in, t.TempDir(), 12); err != nil {
		t.Errorf("export with 12 descriptors: %v", err)
	}
}

// km40 is 40 copies of km003c-adc-1000hz.pcapng (22 MB: 138,320 events,
// more than a row group of pages).
func km40(t *testing.T) string {
	data, err := os.ReadFile("../../shared/testdata/usb/km003c-adc-1000hz.pcapng") // public, see its README
	if err != nil {
		t.Skip(err)
	}
	in := filepath.Join(t.TempDir(), "big.pcapng")
	if err := os.WriteFile(in, bytes.Repeat(data, 40), 0o600); err != nil {
		t.Fatal(err)
	}
	return in
}

// exportWithFDs exports in into dir with RLIMIT_NOFILE set to the
// descriptors open now plus extra.
func exportWithFDs(t *testing.T, in, dir string, extra int) error {
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
	low.Cur = uint64(len(fds) + extra)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	_, err = x.ExportPath(context.Background(), in)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); rerr != nil {
		t.Fatal(rerr)
	}
	return err
}
