package main

import (
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
	"github.com/iotap/iotap/report"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// complete runs cobra's hidden __complete command (what the shell
// completion scripts call) and returns the values and the directive line.
func complete(t *testing.T, args ...string) (vals []string, directive string) {
	t.Helper()
	out, errs, code := runUSB(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d %s", args, code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		vals = append(vals, v)
	}
	return vals, lines[len(lines)-1]
}

// TestFlagCompletion: every value completed for a flag is one the flag's
// own parser accepts, and the lists hold what the parsers know.
func TestFlagCompletion(t *testing.T) {
	const noFile = ":4"
	cases := []struct {
		args      []string
		directive string
		accept    func(string) bool
		min       int
	}{
		{[]string{"usb", "read", "--type", ""}, noFile, func(s string) bool { _, err := usb.ParseTransferType(s); return err == nil }, 4},
		{[]string{"usb", "stats", "--type", ""}, noFile, func(s string) bool { _, err := usb.ParseTransferType(s); return err == nil }, 4},
		{[]string{"usb", "pair", "--dir", ""}, noFile, func(s string) bool { return s == "in" || s == "out" }, 2},
		{[]string{"usb", "read", "--status", ""}, noFile, func(s string) bool { _, ok := usb.ParseStatus(s); return ok }, 20},
		{[]string{"usb", "convert", "--format", ""}, noFile, func(s string) bool { _, err := usbmon.ParseFormat(s); return err == nil }, 4},
		{[]string{"usb", "convert", "--to", ""}, noFile, func(s string) bool { _, err := usbmon.ParseFormat(s); return err == nil }, 4},
		{[]string{"usb", "convert", "--link-type", ""}, noFile, func(s string) bool { return s == "189" || s == "220" }, 2},
		{[]string{"report", "--format", ""}, noFile, func(s string) bool { _, err := report.OutputKinds([]string{"x"}, s); return err == nil }, 3},
		{[]string{"mmio", "filter", "--kind", ""}, noFile, func(s string) bool { _, ok := mmiotrace.ParseKind(s); return ok }, 11},
		{[]string{"report", "--db", ""}, ":0", func(s string) bool { _, err := regdb.Builtin(s); return err == nil }, len(regdb.Builtins())},
		{[]string{"timeline", "--db", ""}, ":0", func(s string) bool { _, err := regdb.Builtin(s); return err == nil }, len(regdb.Builtins())},
		{[]string{"mmio", "names", "--db", ""}, ":0", func(s string) bool { _, err := regdb.Builtin(s); return err == nil }, len(regdb.Builtins())},
	}
	for _, c := range cases {
		vals, dir := complete(t, c.args...)
		if dir != c.directive {
			t.Errorf("%q: directive %s, want %s", c.args, dir, c.directive)
		}
		if len(vals) < c.min {
			t.Errorf("%q: %d values %q, want at least %d", c.args, len(vals), vals, c.min)
		}
		for _, v := range vals {
			if !c.accept(v) {
				t.Errorf("%q: completes %q, which the flag refuses", c.args, v)
			}
		}
	}
	// Every usb transfer type and usbmon format is offered.
	vals, _ := complete(t, "usb", "read", "--type", "")
	if strings.Join(vals, " ") != "ctrl bulk intr iso" {
		t.Errorf("--type: %q", vals)
	}
	// --method of usb capture exists only on Linux.
	if vals, _ := complete(t, "usb", "capture", "--method", ""); len(vals) > 0 && strings.Join(vals, " ") != "mmap read text" {
		t.Errorf("--method: %q", vals)
	}
	// Time flags offer the forms of a TIME, and each prefix form parses
	// once completed with a number.
	vals, _ = complete(t, "timeline", "--to", "")
	if len(vals) < 4 {
		t.Errorf("timeline --to: %q", vals)
	}
}

// TestFilterCompletion: -Y completes the field being typed at the end of
// the expression with the command's fields, keeping what precedes it; each
// completion compiles once compared with a number or string.
func TestFilterCompletion(t *testing.T) {
	for _, c := range []struct {
		cmd      []string
		typed    string
		want     string
		compiles func(string) error
	}{
		{[]string{"usb", "read"}, "usb.ep == 1 && usb.endpoint_a", "usb.ep == 1 && usb.endpoint_address", func(s string) error { _, err := usb.ParseFilter(s+" == 1", nil); return err }},
		{[]string{"usb", "convert"}, "!usb.urb_s", "!usb.urb_status", func(s string) error { _, err := usb.ParseFilter(s+" == 1", nil); return err }},
		{[]string{"mmio", "read"}, "(mmio.re", "(mmio.reg", func(s string) error { _, err := regdb.ParseFilter(s+` == "CTRL")`, &regdb.Binder{}); return err }},
	} {
		vals, dir := complete(t, append(c.cmd, "-Y", c.typed)...)
		if dir != ":6" { // no space, no files
			t.Errorf("%s: directive %s", c.typed, dir)
		}
		found := false
		for _, v := range vals {
			if !strings.HasPrefix(v, c.typed[:strings.LastIndexAny(c.typed, " (!")+1]) {
				t.Errorf("%s: completion %q drops what was typed", c.typed, v)
			}
			if err := c.compiles(v); err != nil {
				t.Errorf("%s: completion %q: %v", c.typed, v, err)
			}
			found = found || v == c.want
		}
		if !found {
			t.Errorf("%s: completions %q lack %q", c.typed, vals, c.want)
		}
	}
}
