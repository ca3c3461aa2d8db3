package intelpt

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGatedCommand: a command Record runs is held in its shell, before
// the exec, until released (its /proc cmdline is still the gate's read
// then); released, it execs and its exit is delivered; aborted, it never
// runs.
func TestGatedCommand(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	var out bytes.Buffer
	g, err := startGated([]string{"/bin/sh", "-c", "echo ran > " + ran + "; echo out"}, nil, &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	// Between the clone and the shell's exec the child's cmdline is
	// empty or the test's own: wait (up to 10 s) for the shell.
	var cl []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if cl, err = os.ReadFile(filepath.Join("/proc", strconv.Itoa(g.pid()), "cmdline")); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(cl), "read _ <&3") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(string(cl), "read _ <&3") {
		t.Errorf("before release the process is %q, want the gate's shell", cl)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command ran before its release")
	}
	if err := <-g.release(); err != nil {
		t.Fatalf("released command: %v", err)
	}
	if b, err := os.ReadFile(ran); err != nil || string(b) != "ran\n" || out.String() != "out\n" {
		t.Errorf("released command: file %q (%v), output %q", b, err, out.String())
	}
	g.abort() // after release: nothing

	never := filepath.Join(dir, "never")
	g, err = startGated([]string{"/bin/sh", "-c", "echo > " + never}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.abort()
	if g.cmd.ProcessState == nil || g.cmd.ProcessState.Success() {
		t.Errorf("aborted command: state %v, want killed and reaped", g.cmd.ProcessState)
	}
	if _, err := os.Stat(never); err == nil {
		t.Error("an aborted command ran")
	}
}
