package vmlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// E1000PCI is the PCI address of the e1000 NIC in the guest (Machine.NIC).
// The lab pins every PCI device to a slot: e1000 00:03.0, qemu-xhci
// 00:04.0, usb-ehci 00:05.0, virtio-9p 00:06.0.
const E1000PCI = "0000:00:03.0"

// Guest PCI addresses of the USB controllers (Machine.USB).
const (
	XHCIPCI = "0000:00:04.0"
	EHCIPCI = "0000:00:05.0"
)

// InVM reports whether the code runs inside a lab guest (IOTAP_IN_VM=1,
// which the guest's init sets for everything it runs).
func InVM() bool { return os.Getenv("IOTAP_IN_VM") == "1" }

// Defaults of a Machine.
const (
	DefaultMemoryMB   = 1024
	DefaultTCGTimeout = 5 * time.Minute
	DefaultKVMTimeout = 2 * time.Minute
)

// Run boots m under QEMU, runs m.Script in the guest and returns what the
// run left behind. It skips t under -short and when QEMU, the lab kernel
// or a static busybox is missing, saying how to get them. It fails t when
// the guest breaks: QEMU fails, the kernel panics, the run exceeds its
// timeout, or the guest powers off without recording the script's exit
// status. A non-zero Result.ExitCode is left to the caller to judge.
func Run(t testing.TB, m Machine) *Result {
	t.Helper()
	res, err := run(t, m)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// run is Run returning the guest's failure as an error.
func run(t testing.TB, m Machine) (*Result, error) {
	t.Helper()
	qemu, kernel, busybox := requirements(t, m)
	if err := checkGuestPaths(m); err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{"/bin/iotap": iotapBinary(t)}
	for g, h := range m.Binaries {
		bins[g] = h
	}
	work := t.TempDir()
	initrd, err := buildInitramfs(initramfsSpec{busybox: busybox, binaries: bins, files: m.Files, script: m.Script, usb: m.USB})
	if err != nil {
		return nil, err
	}
	initrdPath := filepath.Join(work, "initrd.gz")
	if err := os.WriteFile(initrdPath, initrd, 0o600); err != nil {
		return nil, err
	}
	if m.USB {
		for _, d := range []string{"d0", "d1"} {
			if err := writeDisk(filepath.Join(work, d+".img"), d); err != nil {
				return nil, err
			}
		}
	}
	accel, fallback := chooseAccel()
	res, err := boot(t, m, qemu, kernel, initrdPath, work, accel, fallback)
	if err != nil && fallback && errors.Is(err, errKVMFailed) {
		t.Logf("vmlab: KVM failed, falling back to TCG: %v", err)
		kvmBroken.Store(true)
		accel = "tcg"
		res, err = boot(t, m, qemu, kernel, initrdPath, work, accel, false)
	}
	// A guest that died or hung before its script started is booted
	// again: nothing of the test has run yet, so a retry hides no test
	// failure. Every retry is logged with the failed boot's console.
	for retry := 1; retry <= MaxBootRetries && err != nil && errors.Is(err, ErrBootFailed); retry++ {
		if runTimeout(t, m, accel) < time.Minute {
			break
		}
		t.Logf("vmlab: RETRY %d of %d: %v", retry, MaxBootRetries, err)
		res, err = boot(t, m, qemu, kernel, initrdPath, work, accel, false)
	}
	return res, err
}

var errKVMFailed = errors.New("kvm failed")

// ErrBootFailed wraps the errors of runs whose guest stopped or hung
// before its script started (a kernel panic during boot, init unable to
// mount the /out share, no script after BootTimeout). Run boots such a
// guest again, up to MaxBootRetries times, and logs each retry.
var ErrBootFailed = errors.New("vmlab: the guest failed before its script started")

// MaxBootRetries is how many times Run boots a guest again after
// ErrBootFailed. Failures after the script started are never retried.
const MaxBootRetries = 2

// BootTimeout is how long a TCG guest may take to start its script (4 to
// 22 s is usual on a loaded 2-core host) before the boot counts as failed.
const BootTimeout = 3 * time.Minute

// boot runs one QEMU process to completion.
// With probe set, a KVM guest that has not started its script within
// kvmProbeTime is taken for a broken KVM (errKVMFailed).
func boot(t testing.TB, m Machine, qemu, kernel, initrd, work, accel string, probe bool) (*Result, error) {
	t.Helper()
	out := filepath.Join(work, "out")
	os.RemoveAll(out)
	if err := os.MkdirAll(filepath.Join(out, ".vmlab"), 0o777); err != nil {
		return nil, err
	}
	sockDir, err := os.MkdirTemp("", "vmlab")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(sockDir)
	qmpSock := filepath.Join(sockDir, "qmp.sock")

	args, err := qemuArgs(m, kernel, initrd, work, out, qmpSock, accel)
	if err != nil {
		return nil, err
	}
	timeout := runTimeout(t, m, accel)
	if timeout <= 0 {
		return nil, fmt.Errorf("vmlab: the test's deadline leaves no time to boot a guest (go test -timeout)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)

	consoleFile, err := os.Create(filepath.Join(work, "console.log"))
	if err != nil {
		return nil, err
	}
	defer consoleFile.Close()
	con := &consoleWriter{start: time.Now(), marker: []byte(scriptStartLine)}
	var stdout io.Writer = io.MultiWriter(consoleFile, con)
	if os.Getenv("IOTAP_VM_VERBOSE") == "1" {
		stdout = io.MultiWriter(stdout, os.Stderr)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Stdout = stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	// QEMU dies with the test process (a go test timeout, a crash) rather
	// than running on as an orphan on a shared machine.
	cmd.SysProcAttr = dieWithParent()
	t.Logf("vmlab: %s %s", qemu, strings.Join(args, " "))
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("vmlab: start qemu: %w", err)
	}

	done := make(chan struct{})
	bootLimit, bootErr := BootTimeout, ErrBootFailed
	if accel == "kvm" && probe {
		bootLimit, bootErr = kvmProbeTime, errKVMFailed
	}
	if bootLimit < timeout {
		go func() {
			select {
			case <-done:
			case <-time.After(bootLimit):
				if !con.marked() {
					cancelCause(fmt.Errorf("%w: the guest did not start its script within %v", bootErr, bootLimit))
				}
			}
		}()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		monitorLoop(t, qmpSock, filepath.Join(out, ".vmlab"), done)
	}()
	waitErr := cmd.Wait()
	close(done)
	wg.Wait()
	elapsed := time.Since(start)

	console := con.String()
	started := con.marked()
	res := &Result{Out: out, Console: console, Accel: accel, Elapsed: elapsed, Boot: con.markAt}
	if cause := context.Cause(ctx); errors.Is(cause, errKVMFailed) {
		return nil, cause
	} else if errors.Is(cause, ErrBootFailed) {
		return nil, fmt.Errorf("%w; QEMU killed after %v\nconsole tail:\n%s", cause, elapsed.Round(time.Second), tail(console, 60))
	}
	if ctx.Err() != nil {
		err := fmt.Errorf("vmlab: guest did not finish within %v (accel %s); QEMU killed\nconsole tail:\n%s", timeout, accel, tail(console, 60))
		if !started {
			err = fmt.Errorf("%w: %w", ErrBootFailed, err)
		}
		return nil, err
	}
	if accel == "kvm" && (strings.Contains(stderr.String(), "KVM internal error") || waitErr != nil) {
		return nil, fmt.Errorf("%w: %v: %s", errKVMFailed, waitErr, tail(stderr.String(), 10))
	}
	if waitErr != nil {
		return nil, fmt.Errorf("vmlab: qemu failed: %v\n%s\nconsole tail:\n%s", waitErr, stderr.String(), tail(console, 60))
	}
	b, err := os.ReadFile(filepath.Join(out, ".exit"))
	if err != nil {
		if accel == "kvm" {
			return nil, fmt.Errorf("%w: guest left no exit status", errKVMFailed)
		}
		return nil, noExitError(console, stderr.String())
	}
	res.ExitCode, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("vmlab: bad exit status %q in /out/.exit", b)
	}
	t.Logf("vmlab: accel %s, script started after %v, exit %d after %v", accel, res.Boot.Round(time.Millisecond), res.ExitCode, elapsed.Round(time.Millisecond))
	if w := kernelComplaints(console); w != "" {
		t.Logf("vmlab: the guest kernel complained:\n%s", w)
	}
	return res, nil
}

// runTimeout is how long a run of m may take: m.Timeout or the default
// of the accelerator, cut to end 10 s before the test's deadline.
func runTimeout(t testing.TB, m Machine, accel string) time.Duration {
	timeout := m.Timeout
	if timeout == 0 {
		timeout = DefaultTCGTimeout
		if accel == "kvm" {
			timeout = DefaultKVMTimeout
		}
	}
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok && time.Until(dl)-10*time.Second < timeout {
			timeout = time.Until(dl) - 10*time.Second
		}
	}
	return timeout
}

// monitorLoop connects to QEMU's QMP socket and serves the guest's
// lab_monitor requests until done is closed.
func monitorLoop(t testing.TB, sock, reqDir string, done <-chan struct{}) {
	var q *qmp
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if q != nil {
				q.close()
			}
			return
		case <-tick.C:
		}
		if q == nil {
			var err error
			if q, err = dialQMP(sock, 0); err != nil {
				q = nil
				continue
			}
		}
		lines, err := serveMonitorRequests(q, reqDir)
		for _, l := range lines {
			t.Logf("vmlab: %s", l)
		}
		if err != nil {
			t.Logf("vmlab: monitor: %v", err)
		}
	}
}
