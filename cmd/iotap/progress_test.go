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

// TestMMIOReadProgressSameOutput: with --progress mmio read reads the log
// as a stream through the meter (not mapped), and writes the same bytes:
// -c and -Y (the Reader path), the whole log (ConvertLog), --check.
func TestMMIOReadProgressSameOutput(t *testing.T) {
	for _, args := range [][]string{
		{"mmio", "read", "-c", "12", "../../mmiotrace/testdata/e1000-trace-file.log.xz"},
		{"mmio", "read", "--json", "-Y", `mmio.kind == "W"`, "../../testdata/mmiotrace/e1000-probe.log"},
		{"mmio", "read", "--json", "../../mmiotrace/testdata/e1000-bind.log"},
		{"mmio", "read", "--check", "../../testdata/capture/mmio.log.zst"},
	} {
		want, _, code := runIotap(t, args...)
		got, errs, pcode := runIotap(t, append([]string{"--progress"}, args...)...)
		if got != want || pcode != code || code != 0 || want == "" {
			t.Errorf("%v: --progress wrote %d bytes (exit %d), without %d bytes (exit %d)\n%s", args, len(got), pcode, len(want), code, errs)
		}
	}
}
