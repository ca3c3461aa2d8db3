package mapfile

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWakeFIFOs: an open of a named pipe that has no writer returns once
// the context is cancelled, and reads the end of the input; stop says a
// pipe was woken. A regular file among the paths is left alone, and
// without cancellation nothing is woken.
func TestWakeFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo, plain := filepath.Join(dir, "p"), filepath.Join(dir, "f")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(plain, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if stop := WakeFIFOs(context.Background(), []string{fifo, plain}); stop() {
		t.Error("woke a pipe without cancellation")
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := WakeFIFOs(ctx, []string{"--from", plain, fifo})
	opened := make(chan error, 1)
	go func() {
		f, err := os.Open(fifo) // blocks: no writer
		if err == nil {
			var b []byte
			b, err = io.ReadAll(f)
			if err == nil && len(b) != 0 {
				err = io.ErrUnexpectedEOF
			}
			f.Close()
		}
		opened <- err
	}()
	cancel()
	select {
	case err := <-opened:
		if err != nil {
			t.Errorf("the woken open: %v, want an empty input", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the open of the pipe still waits 10 s after the cancellation")
	}
	if !stop() {
		t.Error("stop says no pipe was woken")
	}
	if b, err := os.ReadFile(plain); err != nil || string(b) != "x" {
		t.Errorf("the regular file: %q, %v", b, err)
	}
}

// TestWakeFIFOsInUse: a named pipe in use (its reader and writer open,
// as a capture writing to 'iotap usb read FIFO') is not woken when the
// context is cancelled: no open waits, and the command's own end (exit
// 0 of a capture stopped by SIGINT) is kept.
func TestWakeFIFOsInUse(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stop := WakeFIFOs(ctx, []string{fifo})
	cancel()
	time.Sleep(200 * time.Millisecond) // several looks
	if stop() {
		t.Error("a pipe in use was woken")
	}
}
