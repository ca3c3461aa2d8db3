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
