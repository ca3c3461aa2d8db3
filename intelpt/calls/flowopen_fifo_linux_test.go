package calls

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenFlowFIFO: a named pipe is refused by its mode, not opened: a
// perf.data is read by offsets, and OpenFlow used to open the pipe once
// to read its head and then again, which waits for a writer for ever
// (the writer gone after the first reading). Here no writer ever comes:
// opening it at all would block.
func TestOpenFlowFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := OpenFlow(fifo, FlowOptions{Stream: -1})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
			t.Errorf("OpenFlow of a named pipe: %v", err)
		}
	case <-time.After(10 * time.Second):
		// Release the open that waits for a writer (O_RDWR does not block).
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("OpenFlow opened the named pipe and waited for a writer")
	}
}
