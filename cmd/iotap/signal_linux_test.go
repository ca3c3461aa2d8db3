package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
)

// TestFirstSignalEndsFIFOOpen: iotap blocked opening a named pipe that
// has no writer (or, for -o, no reader) ends on the first SIGINT or
// SIGTERM with exit 130, "interrupted", for every command that opens an
// input. Before, open(2) never looked at the cancelled context: the
// first signal was ignored, and only a second one (since session 10)
// killed the process. The test waits for the process to be in the
// kernel's FIFO open (wait_for_partner in /proc/PID/task/*/wchan) before
// signalling, and fails instead of hanging when the process lives on.
func TestFirstSignalEndsFIFOOpen(t *testing.T) {
	dir := t.TempDir()
	fifo := mapfiletest.FIFO(t)
	good := "../../testdata/usbmon/lab-0u.txt"
	for i, args := range [][]string{
		{"usb", "read", fifo},
		{"usb", "stats", fifo},
		{"mmio", "read", fifo},
		{"mmio", "read", "--from", "1", fifo},
		{"mmio", "filter", fifo},
		{"events", "read", fifo},
		{"pt", "dump", fifo},
		{"pt", "stats", fifo},
		{"pt", "calls", fifo},
		{"cut", "--from", "0", "-o", filepath.Join(dir, "cut.out"), fifo},
		{"index", fifo},
		{"timeline", "-o", filepath.Join(dir, "t.pftrace"), fifo},
		{"report", fifo},
		{"usb", "convert", "--format", "1u", "-o", fifo, good}, // an output without a reader
	} {
		sig := os.Interrupt
		if i%2 == 1 {
			sig = syscall.SIGTERM
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "IOTAP_TEST_AS_MAIN=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !waitFIFOOpen(cmd.Process.Pid, done) {
			t.Errorf("%v: never waited in the FIFO's open: %s", args, stderr.String())
			cmd.Process.Kill()
			<-done
			continue
		}
		cmd.Process.Signal(sig)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%v: still running 10 s after %v", args, sig)
			continue
		}
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains("\n"+stderr.String(), "\niotap: interrupted") {
			t.Errorf("%v after %v: exit %d (%v), stderr %q; want 130, interrupted", args, sig, code, cmd.ProcessState, stderr.String())
		}
	}
}

// waitFIFOOpen waits (up to 10 s) until a thread of process pid sleeps in
// the kernel's FIFO open (wait_for_partner); false when the process ended
// (done) or never got there.
func waitFIFOOpen(pid int, done chan error) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/wchan")
		for _, w := range tasks {
			if b, err := os.ReadFile(w); err == nil && string(b) == "wait_for_partner" {
				return true
			}
		}
		select {
		case err := <-done:
			done <- err
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}
