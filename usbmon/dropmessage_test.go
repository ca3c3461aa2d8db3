package usbmon

import (
	"strings"
	"testing"
	"time"
)

// TestDropMessage: the remedies offered are the ones that apply to how
// the capture ran (a knob already at its limit is not offered), and a
// capture that dropped nothing has no message.
func TestDropMessage(t *testing.T) {
	mmap := func(queue int) RecordStats { return RecordStats{Method: MethodMmap, Queue: queue} }
	for _, c := range []struct {
		name     string
		st       CaptureStats
		nice     int
		opt      RecordStats
		has, not []string
	}{
		{"none dropped", CaptureStats{RingSize: 8 << 10}, 0, mmap(0), nil, nil},
		{"small ring, in place, no nice", CaptureStats{Dropped: 5, RingSize: 8 << 10, RingPeak: 8 << 10, MaxStall: 1234567 * time.Nanosecond},
			0, mmap(0), []string{"dropped 5 events (ring 8192 bytes; ring peak 8K, undrained for at most 1.23ms", "a larger --ring-size (up to 1200K)", "--queue (drains", "--nice -20 as root"}, []string{"--snaplen"}},
		{"queue nearly full, nice applied", CaptureStats{Dropped: 1, RingSize: RingSizeMax, QueuePeak: 31 << 20}, -20, mmap(32 << 20),
			[]string{"a larger --queue"}, []string{"--ring-size", "--nice", "--snaplen"}},
		{"every knob at its limit", CaptureStats{Dropped: 1, RingSize: RingSizeMax, Nice: -20}, 0, mmap(32 << 20),
			[]string{"try --snaplen (less data per event) or --bus (fewer events))"}, []string{"--ring-size", "--queue", "--nice"}},
		{"text", CaptureStats{Dropped: 3}, 0, RecordStats{Method: MethodText},
			[]string{"the kernel's text API lost 3 events (text_lost; use --method mmap)"}, []string{"--ring-size"}},
	} {
		st := c.opt
		st.Capture = c.st
		msg := FileResult{Stats: st, Nice: c.nice}.DropMessage()
		if (msg == "") != (c.st.Dropped == 0) {
			t.Errorf("%s: message %q", c.name, msg)
		}
		for _, s := range c.has {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: %q lacks %q", c.name, msg, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(msg, s) {
				t.Errorf("%s: %q offers %q", c.name, msg, s)
			}
		}
	}
}
