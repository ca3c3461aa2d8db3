package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSecondSignalEnds: iotap blocked opening a named pipe that has no
// writer (it never looks at its context there) ends on a second SIGINT;
// it ignored every SIGINT and SIGTERM before.
func TestSecondSignalEnds(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, args := range [][]string{{"mmio", "read", fifo}, {"usb", "read", fifo}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "IOTAP_TEST_AS_MAIN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		time.Sleep(300 * time.Millisecond) // blocked in open(2)
		var err error
		for i := 0; i < 2; i++ {
			cmd.Process.Signal(os.Interrupt)
			select {
			case err = <-done:
			case <-time.After(2 * time.Second):
				continue
			}
			break
		}
		if err == nil && cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
			t.Fatalf("%v: still running after two SIGINTs", args)
		}
		if cmd.ProcessState.Success() {
			t.Errorf("%v: exit 0 after SIGINT", args)
		}
	}
}
