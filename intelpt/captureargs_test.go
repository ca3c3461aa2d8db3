package intelpt

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestCaptureArgs: the directory is needed; --cpu, --pid and a command
// exclude each other; the CPU list is parsed; a PID is traced per
// thread, a command started; errors name the flag.
func TestCaptureArgs(t *testing.T) {
	for _, c := range []struct {
		args CaptureArgs
		err  string
	}{
		{CaptureArgs{CPUs: "0"}, "-o DIR"},
		{CaptureArgs{Dir: "d", CPUs: "0", Record: RecordOptions{Trace: TraceConfig{PID: 1}}}, "one of --cpu, --pid or -- COMMAND"},
		{CaptureArgs{Dir: "d", CPUs: "0", Command: []string{"true"}}, "one of --cpu, --pid or -- COMMAND"},
		{CaptureArgs{Dir: "d", CPUs: "3-1"}, "--cpu: "},
		{CaptureArgs{Dir: "d", Duration: -time.Second}, "--duration -1s: want 0 (no limit) or more"},
	} {
		if _, err := c.args.Options(); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.args, err, c.err)
		}
	}
	o, err := CaptureArgs{Dir: "d", CPUs: "0-2,5"}.Options()
	if err != nil || !reflect.DeepEqual(o.Trace.CPUs, []int{0, 1, 2, 5}) || o.Trace.Mode != PerCPU || o.Run {
		t.Errorf("--cpu 0-2,5: %+v, %v", o.Trace, err)
	}
	o, err = CaptureArgs{Dir: "d", Record: RecordOptions{Trace: TraceConfig{PID: 42}}}.Options()
	if err != nil || o.Trace.Mode != PerThread || o.Trace.PID != 42 || o.Trace.CPUs != nil {
		t.Errorf("--pid 42: %+v, %v", o.Trace, err)
	}
	o, err = CaptureArgs{Dir: "d", Command: []string{"./prog", "arg"}}.Options()
	if err != nil || !o.Run || !reflect.DeepEqual(o.Command, []string{"./prog", "arg"}) || o.Trace.Mode != PerCPU {
		t.Errorf("COMMAND: %+v, %v", o, err)
	}
}

// TestCaptureArgsDuration: --duration reaches Record's options, and
// Record's context ends after it (a deadline no later than Duration from
// now); 0 leaves the context without a deadline (a negative Duration is
// an error of Options: TestCaptureArgs).
func TestCaptureArgsDuration(t *testing.T) {
	o, err := CaptureArgs{Dir: "d", Duration: time.Hour}.Options()
	if err != nil || o.Duration != time.Hour {
		t.Fatalf("Duration 1h: %v, %v", o.Duration, err)
	}
	before := time.Now()
	ctx, cancel := o.context(context.Background())
	defer cancel()
	dl, ok := ctx.Deadline()
	if !ok || dl.Before(before.Add(time.Hour)) || dl.After(time.Now().Add(time.Hour)) {
		t.Errorf("Duration 1h: deadline %v (%v), want 1h after %v", dl, ok, before)
	}
	o, err = CaptureArgs{Dir: "d"}.Options()
	ctx, cancel = o.context(context.Background())
	if _, ok := ctx.Deadline(); ok || err != nil {
		t.Errorf("Duration 0: the context has a deadline (%v)", err)
	}
	cancel()
}
