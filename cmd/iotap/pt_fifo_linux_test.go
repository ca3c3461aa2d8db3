package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPTFlowFIFO: pt flow lists a raw trace read from a FIFO as it lists
// the file (it said "bad offset 0x0": a FIFO cannot be mapped, it is
// read).
func TestPTFlowFIFO(t *testing.T) {
	args, want := ptFlowFileListing(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	b, err := os.ReadFile(ptFlowTrace)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(b)
		w.Close()
	}()
	if got, _, err := ptRun(t, append(args, fifo)...); err != nil || got != want {
		t.Errorf("from a FIFO: %v\n%s\nwant\n%s", err, got, want)
	}
}
