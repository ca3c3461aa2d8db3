package main

import (
	"bytes"
	"context"
	"testing"
)

// Progress is shown on a terminal (not tested here: the test's stderr is
// a buffer), with --progress anywhere, never with --progress=false; the
// flag is accepted by every command.
func TestProgressFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		show bool
	}{
		{[]string{"timeline"}, false}, // stderr is not a terminal
		{[]string{"timeline", "--progress"}, true},
		{[]string{"--progress", "usb", "read"}, true},
		{[]string{"mmio", "read", "--progress=false"}, false},
	} {
		var stdout, stderr bytes.Buffer
		e := &env{ctx: context.Background(), stdout: &stdout, stderr: &stderr}
		root := newRootCmd(e)
		c, rest, err := root.Find(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ParseFlags(rest); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		root.PersistentPreRun(c, nil)
		if got := e.meter("x", 10, false) != nil; got != tc.show {
			t.Errorf("%v: progress shown %v, want %v", tc.args, got, tc.show)
		}
	}
}

// The size of a trace is extrapolated from the start of the inputs, once
// enough of them was read, to warn early that the Perfetto UI will not
// open it.
func TestTimelineEstimate(t *testing.T) {
	for _, tc := range []struct {
		read, total, written int64
		want                 int64
		ok                   bool
	}{
		{128 << 20, 1 << 30, 330 << 20, 2640 << 20, true}, // a 1 GB mmio log: 2.6 GB
		{4 << 20, 100 << 20, 1 << 20, 0, false},           // under 8 MB read
		{10 << 20, 1 << 30, 1 << 20, 0, false},            // under 2 % read
		{10 << 20, 0, 1 << 20, 0, false},                  // size unknown (a pipe)
		{10 << 20, 10 << 20, 3 << 20, 3 << 20, true},
	} {
		got, ok := timelineEstimate(tc.read, tc.total, tc.written)
		if ok != tc.ok || got != tc.want {
			t.Errorf("timelineEstimate(%d, %d, %d) = %d %v, want %d %v", tc.read, tc.total, tc.written, got, ok, tc.want, tc.ok)
		}
	}
}
