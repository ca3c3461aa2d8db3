package main

import (
	"strings"
	"testing"
)

// Bad capture options are usage errors (exit 2) before any device is
// opened, with the accepted range in the message.
func TestUSBCaptureUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nice", "-30"}, "want -20..19 or auto"},
		{[]string{"--nice", "fast"}, "want -20..19 or auto"},
		{[]string{"--queue", "lots"}, "--queue"},
		{[]string{"--ring-size", "4K"}, "the kernel accepts 8192 (8K) to 1228800 (1200K) bytes"},
		{[]string{"--dev", "128"}, "want a device address, 1 to 127"},
		{[]string{"--vidpid", "xyz"}, "--vidpid"},
	} {
		args := append([]string{"usb", "capture", "-o", t.TempDir() + "/x.pcapng"}, tc.args...)
		_, errs, code := runUSB(t, args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
