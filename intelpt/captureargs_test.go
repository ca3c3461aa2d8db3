package intelpt

import (
	"reflect"
	"strings"
	"testing"
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
