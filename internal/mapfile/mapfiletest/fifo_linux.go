package mapfiletest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// FIFO makes a named pipe in a new temporary directory of t and returns
// its path; the test is skipped where no named pipe can be made.
func FIFO(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	return path
}

// FeedFIFO writes data into the named pipe at path once a reader opens
// it, and reports on the channel; it gives up (with an error) when no
// reader comes within d, so it never blocks a test (a writer blocked in
// open(2) would stay for ever).
func FeedFIFO(path string, data []byte, d time.Duration) <-chan error {
	ch := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(d)
		for {
			// O_NONBLOCK: ENXIO while no reader has the pipe open.
			f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				// Blocking writes from here on.
				if err = syscall.SetNonblock(int(f.Fd()), false); err == nil {
					_, err = f.Write(data)
				}
				f.Close()
				ch <- err
				return
			}
			if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
				ch <- fmt.Errorf("no reader opened the pipe: %w", err)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return ch
}
