//go:build linux

package usbmon

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Without usbmon the error says what to do, and wraps ErrNotSupported.
func TestCaptureNotSupported(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []Method{MethodMmap, MethodRead} {
		_, err := OpenCapture(context.Background(), CaptureOptions{Method: m, DevDir: dir})
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "modprobe usbmon") || !strings.Contains(err.Error(), "CONFIG_USB_MON") {
			t.Errorf("%v: %v", m, err)
		}
	}
	_, err := OpenCapture(context.Background(), CaptureOptions{Method: MethodText, DebugFS: dir})
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "mount -t debugfs") {
		t.Errorf("text: %v", err)
	}
	if _, err := OpenCapture(context.Background(), CaptureOptions{Bus: 300}); err == nil {
		t.Error("bus 300 accepted")
	}
}

func TestMountinfoDebugfs(t *testing.T) {
	mi := `22 1 0:21 / /proc rw,nosuid - proc proc rw
31 22 0:7 / /sys/kernel/debug rw - debugfs debugfs rw
40 22 0:7 / /mnt/my\040debug rw - debugfs none rw
`
	if got := debugfsFromMountinfo([]byte(mi)); got != "/sys/kernel/debug" {
		t.Errorf("got %q", got)
	}
	if got := debugfsFromMountinfo([]byte(mi[strings.Index(mi, "40 "):])); got != "/mnt/my debug" {
		t.Errorf("escaped: got %q", got)
	}
	if n, err := parseTextLost([]byte("nreaders 2 events 180 text_lost 7\n")); n != 7 || err != nil {
		t.Errorf("text_lost: %d %v", n, err)
	}
}
