package export_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotap/iotap/export"
)

// A named pipe given as an input is refused before it is opened: export
// reads an input more than once (its kind, the capture id from its first
// 64 KiB, then its records), so a pipe would lose what the first reads
// took. It exported the rest as if it were the whole log, exit 0.
func TestExportRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "log.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	log, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	// A writer that sends the log to every reader that opens the pipe.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.Write(log)
			f.Close()
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	defer func() { // release the writer blocked in its open
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	x, err := export.New(export.Options{Dir: filepath.Join(dir, "pq")})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := x.ExportAll(context.Background(), []string{fifo}, nil)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute): // not a timing check: a guard against a hang
		t.Fatal("ExportAll is still reading the pipe after a minute")
	}
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("error %v: want the pipe named and refused as not a regular file", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "pq")); err == nil {
		t.Error("the output directory was created")
	}
}
