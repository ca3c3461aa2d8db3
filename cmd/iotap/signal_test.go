package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// A command stopped by SIGINT/SIGTERM exits 130, says so (not "context
// canceled") and leaves a complete, readable output file. The signal is
// simulated by a context cancelled before the command starts, so the test
// does not depend on timing.
func TestInterruptedExit130(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"usb", "convert", "--format", "pcapng", usbLab("lab-capture.pcapng")}, "a.pcapng"},
		{[]string{"mmio", "read", filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log")}, "m.log"},
		{[]string{"mmio", "filter", "--write", filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log")}, "f.log"},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("interrupt signal received"))
		out := filepath.Join(dir, tc.out)
		var stdout, stderr bytes.Buffer
		err := run(ctx, append(tc.args, "-o", out), &stdout, &stderr)
		code := exitCode(err, &stderr)
		if code != exitInterrupted {
			t.Errorf("%v: exit %d, want 130; stderr %q", tc.args, code, stderr.String())
		}
		msg := stderr.String()
		if strings.Contains(msg, "context canceled") || !strings.Contains(msg, "interrupted (interrupt signal received)") || !strings.Contains(msg, "wrote "+out) {
			t.Errorf("%v: message %q", tc.args, msg)
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("%v: no output: %v", tc.args, err)
		}
	}
	// The interrupted pcapng is a valid (empty) capture.
	f, err := os.Open(filepath.Join(dir, "a.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := usbmon.NewReaderOptions(f, usbmon.ReaderOptions{}); err != nil {
		t.Errorf("interrupted pcapng does not read back: %v", err)
	}
}

func TestUnknownSubcommandExit2(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		suggest string
	}{
		{[]string{"usb", "stat", "x.pcapng"}, "stats"},
		{[]string{"pt", "nosuch"}, ""},
		{[]string{"mmio", "raed", "x.log"}, "read"},
		{[]string{"events", "nosuch"}, ""},
		{[]string{"nosuch"}, ""},
	} {
		_, stderr, code := runUSB(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, "unknown command") {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
		if tc.suggest != "" && !strings.Contains(stderr, "Did you mean this?\n\t"+tc.suggest) {
			t.Errorf("%v: no suggestion %q in %q", tc.args, tc.suggest, stderr)
		}
	}
	// Without a subcommand a group still prints its help, exit 0.
	stdout, _, code := runUSB(t, "usb")
	if code != 0 || !strings.Contains(stdout, "Available Commands") {
		t.Errorf("iotap usb: exit %d, %q", code, stdout)
	}
}

// Every command with a time window validates it the same way (the issue's
// cases: infinite, huge, reversed), with exit 2 and the flag named.
func TestTimeWindowFlags(t *testing.T) {
	mlog := filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log")
	pcap := usbLab("lab-capture.pcapng")
	for _, cmd := range [][]string{{"usb", "read", pcap}, {"usb", "stats", pcap}, {"mmio", "filter", mlog}} {
		for _, tc := range []struct {
			flags []string
			msg   string
		}{
			{[]string{"--from", "1e300"}, "--from"},
			{[]string{"--from", "inf"}, "not a finite number"},
			{[]string{"--to", "1e300"}, "--to"},
			{[]string{"--from", "5", "--to", "1"}, "not before --to"},
			{[]string{"--from", "NaN"}, "not a finite number"},
		} {
			args := append(append([]string{}, cmd...), tc.flags...)
			stdout, stderr, code := runUSB(t, args...)
			if code != exitUsage || !strings.Contains(stderr, tc.msg) || stdout != "" {
				t.Errorf("%v: exit %d, stderr %q, %d bytes out", args, code, stderr, len(stdout))
			}
		}
	}
	// A valid window still selects: the mmio filter's --from/--to and the
	// older --time LO..HI give the same log.
	a, _, c1 := runUSB(t, "mmio", "filter", mlog, "--from", "@12.3", "--to", "@12s500ms")
	b, _, c2 := runUSB(t, "mmio", "filter", mlog, "--time", "@12.3..@12.5")
	all, _, _ := runUSB(t, "mmio", "filter", mlog)
	if c1 != 0 || c2 != 0 || a != b {
		t.Errorf("--from/--to vs --time: exits %d %d, same=%v", c1, c2, a == b)
	}
	if n, m := strings.Count(a, "\nR "), strings.Count(all, "\nR "); n == 0 || n >= m {
		t.Errorf("window kept %d of %d reads", n, m)
	}
}

// A Perfetto trace bigger than the UI loads comes with a warning that
// says why and what to do (the limit is lowered for the test).
func TestTimelineSizeWarning(t *testing.T) {
	defer func(n int64) { perfettoUILimit = n }(perfettoUILimit)
	perfettoUILimit = 1000
	out := filepath.Join(t.TempDir(), "t.pftrace")
	_, stderr, code := runUSB(t, "timeline", usbLab("lab-capture.pcapng"), "-o", out, "--max-size", "0")
	if code != 0 || !strings.Contains(stderr, "warning: "+out) || !strings.Contains(stderr, "browser memory") || !strings.Contains(stderr, "iotap export") {
		t.Errorf("exit %d, %q", code, stderr)
	}
	perfettoUILimit = 1 << 40
	if _, stderr, _ := runUSB(t, "timeline", usbLab("lab-capture.pcapng"), "-o", out, "--max-size", "0"); strings.Contains(stderr, "browser memory") {
		t.Errorf("warning on a small trace: %q", stderr)
	}
}

// An interrupted timeline ends its trace validly with the events read so
// far (issue 12): exit 130, the message names the file, and protoc decodes
// it with Perfetto's proto, with fewer events than the whole run's.
func TestInterruptedTimelineValid(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log") // 11,946 accesses
	full := filepath.Join(dir, "full.pftrace")
	if _, stderr, code := runUSB(t, "timeline", in, "-o", full); code != 0 {
		t.Fatalf("timeline: exit %d %s", code, stderr)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	out := filepath.Join(dir, "cut.pftrace")
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"timeline", in, "-o", out}, &stdout, &stderr)
	if code := exitCode(err, &stderr); code != exitInterrupted {
		t.Fatalf("exit %d, want 130: %s", code, stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, "interrupted (interrupt signal received): wrote "+out) {
		t.Errorf("message %q", msg)
	}
	cut, whole := protocText(t, out), protocText(t, full)
	nc, nw := strings.Count(cut, "TYPE_INSTANT"), strings.Count(whole, "TYPE_INSTANT")
	if nc == 0 || nc >= nw {
		t.Errorf("interrupted trace has %d instants, the whole one %d", nc, nw)
	}
}
