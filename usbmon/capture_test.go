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

func TestTextWallClock(t *testing.T) {
	// Monotonic now: 5000.5 s (stamp period wraps at 4096 s); real now:
	// 1,700,000,000 s. An event 2.25 s old has stamp (4998.25 mod 4096) s.
	mono := int64(5000_500_000_000)
	real := int64(1_700_000_000_000_000_000)
	stamp := uint32((4998_250_000) % textPeriod)
	if got, want := textWallClock(stamp, mono, real), real/1000-2_250_000; got != want {
		t.Errorf("got %d, want %d", got, want)
	}
	// Across the wrap: now just after it, event just before.
	mono = 4096_000_100_000 // 4096.0001 s
	stamp = uint32(textPeriod - 50)
	if got, want := textWallClock(stamp, mono, real), real/1000-150; got != want {
		t.Errorf("wrap: got %d, want %d", got, want)
	}
}
