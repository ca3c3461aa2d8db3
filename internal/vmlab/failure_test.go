package vmlab

import (
	"errors"
	"fmt"
	"strings"
	"sync"
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
	if msg := err.Error(); !strings.Contains(msg, "without finishing its script, while it ran (Kernel panic - not syncing: sysrq triggered crash") {
		t.Errorf("error does not report the panic: %v", err)
	}
	if errors.Is(err, ErrBootFailed) {
		t.Errorf("a panic during the script counts as a boot failure (retried): %v", err)
	}
}

// logRecorder is a testing.TB that keeps what is logged.
type logRecorder struct {
	testing.TB
	mu   sync.Mutex
	logs []string
}

func (r *logRecorder) Logf(format string, args ...any) {
	r.mu.Lock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	r.TB.Logf(format, args...)
}

// A guest whose kernel dies before the script starts is booted again
// MaxBootRetries times, each retry logged, then the run fails with
// ErrBootFailed and the reason.
func TestLabBootRetry(t *testing.T) {
	r := &logRecorder{TB: t}
	_, err := run(r, Machine{KernelArgs: "rdinit=/no-such-init", Script: "echo must-not-run"})
	if !errors.Is(err, ErrBootFailed) {
		t.Fatalf("run of a guest without init: %v, want ErrBootFailed", err)
	}
	if !strings.Contains(err.Error(), "before it started (Kernel panic - not syncing") {
		t.Errorf("error does not say the guest panicked before the script: %v", err)
	}
	retries := 0
	for _, l := range r.logs {
		if strings.HasPrefix(l, "vmlab: RETRY ") {
			retries++
		}
	}
	if retries != MaxBootRetries {
		t.Errorf("%d retries logged, want %d:\n%s", retries, MaxBootRetries, strings.Join(r.logs, "\n"))
	}
}

func TestNoExitError(t *testing.T) {
	boot := "[ 0.5] Linux version 6.12\n"
	for _, c := range []struct {
		name, console string
		bootFailed    bool
		want          string
	}{
		{"timer", boot + "[ 1.0] Kernel panic - not syncing: IO-APIC + timer doesn't work!  Boot with apic=debug\n", true,
			"before it started (Kernel panic - not syncing: IO-APIC + timer doesn't work!  Boot with apic=debug)"},
		{"no 9p", boot + "vmlab: cannot mount the 9p share at /out\n", true, "before it started (init could not mount the 9p share at /out)"},
		{"silent", boot, true, "before it started (no kernel panic on the console)"},
		{"oops", boot + scriptStartLine + "\n[ 9.0] Kernel panic - not syncing: Fatal exception in interrupt\n", false,
			"while it ran (Kernel panic - not syncing: Fatal exception in interrupt)"},
		{"poweroff", boot + scriptStartLine + "\nreboot: Power down\n", false, "while it ran (no kernel panic on the console: did the script power the guest off or kill init?)"},
		{"9p lost", boot + scriptStartLine + "\n" + scriptExitLine + "0\n", false, "script exited 0 but its status never reached /out/.exit"},
	} {
		err := noExitError(c.console, "")
		if errors.Is(err, ErrBootFailed) != c.bootFailed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (boot failed %v), want %q (boot failed %v)", c.name, err, errors.Is(err, ErrBootFailed), c.want, c.bootFailed)
		}
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
