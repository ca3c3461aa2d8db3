package vmlab

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatal and Skip end the calling
// goroutine and record the message instead of ending the test, so that
// tests can check when GoTest fails its t. Everything else goes to the
// real test.
type fatalRecorder struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (r *fatalRecorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *fatalRecorder) Skip(args ...any) { r.Skipf("%s", fmt.Sprint(args...)) }
func (r *fatalRecorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func goTestRecorded(t *testing.T, runRegexp string) *fatalRecorder {
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		GoTest(r, Machine{}, ".", runRegexp)
	}()
	<-done
	if r.skipped {
		t.Skip(r.msg)
	}
	return r
}

// TestLabGuestFails fails on purpose in the guest: TestLabGoTestFailure
// runs it there.
func TestLabGuestFails(t *testing.T) {
	if !InVM() {
		t.Skip("fails on purpose in the guest, for TestLabGoTestFailure")
	}
	t.Error("failing on purpose in the guest")
}

func TestLabGoTestFailure(t *testing.T) {
	if InVM() {
		t.Skip("host side of a GoTest check")
	}
	r := goTestRecorded(t, "^TestLabGuestFails$")
	if !r.failed || !strings.Contains(r.msg, "failing on purpose in the guest") {
		t.Errorf("GoTest of a failing guest test: failed=%v skipped=%v msg=%q; want a failure with the guest's output", r.failed, r.skipped, r.msg)
	}
}

func TestGoTestNoMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	r := goTestRecorded(t, "^TestNoSuchTest$")
	if !r.failed || !strings.Contains(r.msg, "no test matches") {
		t.Errorf("GoTest with a pattern matching no test: failed=%v skipped=%v msg=%q", r.failed, r.skipped, r.msg)
	}
}

// TestLabGuestHangs hangs on purpose in the guest: TestLabGoTestHang runs
// it there.
func TestLabGuestHangs(t *testing.T) {
	if !InVM() {
		t.Skip("hangs on purpose in the guest, for TestLabGoTestHang")
	}
	select {}
}

// A guest test that hangs ends with Go's test timeout (and its goroutine
// dump) before the lab's own timeout kills QEMU.
func TestLabGoTestHang(t *testing.T) {
	if InVM() {
		t.Skip("host side of a GoTest check")
	}
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// 100 s: the guest test gets 40 s (a minute less) and the
		// boot, on a loaded host, up to a minute.
		GoTest(r, Machine{Timeout: 100 * time.Second}, ".", "^TestLabGuestHangs$")
	}()
	<-done
	if r.skipped {
		t.Skip(r.msg)
	}
	if !r.failed || !strings.Contains(r.msg, "panic: test timed out") || !strings.Contains(r.msg, "TestLabGuestHangs") {
		t.Errorf("GoTest of a hanging guest test: failed=%v msg=%q; want the guest's test timeout with its stacks", r.failed, r.msg)
	}
}
