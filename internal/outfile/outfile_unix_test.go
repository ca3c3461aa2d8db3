//go:build unix

package outfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestDevicesWrittenDirectly(t *testing.T) {
	f, err := Create("/dev/null", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null replaced: %v %v", fi.Mode(), err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		done <- b
	}()
	g, err := Create(fifo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("through the pipe"))
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if b := <-done; string(b) != "through the pipe" {
		t.Errorf("fifo read %q", b)
	}
}
