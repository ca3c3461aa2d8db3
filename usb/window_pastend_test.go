package usb

import (
	"testing"

	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/usbmon"
)

// TestWindowPastEndOutOfOrder: PastEnd looks at the capture's latest
// event, not its last one: a capture's events may be out of order (text
// stamps of several CPUs, merged files), and a window that starts before
// the latest event and holds some is not past the end. Events at 1 s,
// 5 s and then 2 s with --from 3 (4 s on the capture's clock): the 5 s
// event is kept, so no past-end; with --from 5 (6 s), all are before it.
func TestWindowPastEndOutOfOrder(t *testing.T) {
	for _, c := range []struct {
		from    string
		pastEnd bool
	}{{"3", false}, {"5", true}} {
		spec, err := timerange.ParseSpec(c.from, "")
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWindowFilter(spec)
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, sec := range []int64{1, 5, 2} {
			ev := usbmon.Event{Fields: usbmon.HasWallClock, Sec: sec}
			if w.Keep(&ev) {
				kept++
			}
		}
		if got := w.PastEnd(); got != c.pastEnd || (kept > 0) == got {
			t.Errorf("--from %s over 1 s, 5 s, 2 s: PastEnd %v with %d kept, want %v", c.from, got, kept, c.pastEnd)
		}
	}
}
