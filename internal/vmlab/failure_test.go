package vmlab

import (
	"strings"
	"testing"
	"time"
)

// A guest that never finishes is killed at the timeout and the error
// carries the console tail.
func TestLabTimeout(t *testing.T) {
	_, err := run(t, Machine{Timeout: 45 * time.Second, Script: "echo sleeping-forever; sleep 1000"})
	if err == nil {
		t.Fatal("run of a script that sleeps past the timeout returned no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "did not finish within 45s") {
		t.Errorf("error does not name the timeout: %v", err)
	}
	if !strings.Contains(msg, "sleeping-forever") {
		t.Errorf("error lacks the console tail: %v", err)
	}
}

// A guest kernel that panics ends the run with an error, not a hang.
func TestLabKernelPanic(t *testing.T) {
	_, err := run(t, Machine{Script: "echo c >/proc/sysrq-trigger"})
	if err == nil {
		t.Fatal("run of a guest whose kernel crashed returned no error")
	}
	if msg := err.Error(); !strings.Contains(msg, "without finishing its script") || !strings.Contains(msg, "Kernel panic") {
		t.Errorf("error does not report the panic: %v", err)
	}
}

func TestCheckGuestPaths(t *testing.T) {
	for _, p := range []string{"/tmp/x", "tmp/x", "/out", "/sys/kernel/x", "/dev/../dev/null"} {
		if err := checkGuestPaths(Machine{Files: map[string][]byte{p: nil}}); err == nil {
			t.Errorf("Files[%q] accepted", p)
		}
		if err := checkGuestPaths(Machine{Binaries: map[string]string{p: "/bin/true"}}); err == nil {
			t.Errorf("Binaries[%q] accepted", p)
		}
	}
	for _, p := range []string{"/etc/x", "/bin/tmp", "/tmpx", "/lab/pkg/testdata/a"} {
		if err := checkGuestPaths(Machine{Files: map[string][]byte{p: nil}}); err != nil {
			t.Errorf("Files[%q] refused: %v", p, err)
		}
	}
}

func TestKernelComplaints(t *testing.T) {
	console := "[    1.0] usb 1-1: new device\n" +
		"[    2.5] WARNING: CPU: 0 PID: 1 at kernel/trace/trace.c:123 foo+0x1/0x2\n" +
		"vmlab: script start\nWARNING: not from the kernel\n" +
		"[    3.1] INFO: task dd:70 blocked for more than 120 seconds.\n"
	got := kernelComplaints(console)
	want := "[    2.5] WARNING: CPU: 0 PID: 1 at kernel/trace/trace.c:123 foo+0x1/0x2\n[    3.1] INFO: task dd:70 blocked for more than 120 seconds."
	if got != want {
		t.Errorf("kernelComplaints = %q, want %q", got, want)
	}
	if got := kernelComplaints("[ 1.0] all fine\n"); got != "" {
		t.Errorf("kernelComplaints of a quiet console = %q", got)
	}
}
