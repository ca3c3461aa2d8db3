package usb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/usbmon"
)

// Filter selects events. Filters compose with All, Any and Not; the zero
// value (nil) matches everything.
type Filter func(ev *usbmon.Event) bool

// Match reports whether f selects ev (a nil Filter selects all).
func (f Filter) Match(ev *usbmon.Event) bool { return f == nil || f(ev) }

// All selects events every filter selects (nil filters are skipped).
func All(fs ...Filter) Filter {
	var live []Filter
	for _, f := range fs {
		if f != nil {
			live = append(live, f)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return func(ev *usbmon.Event) bool {
		for _, f := range live {
			if !f(ev) {
				return false
			}
		}
		return true
	}
}

// Any selects events at least one filter selects.
func Any(fs ...Filter) Filter {
	return func(ev *usbmon.Event) bool {
		for _, f := range fs {
			if f.Match(ev) {
				return true
			}
		}
		return false
	}
}

// Not inverts f.
func Not(f Filter) Filter { return func(ev *usbmon.Event) bool { return !f.Match(ev) } }

// BusIs selects a bus.
func BusIs(bus uint16) Filter { return func(ev *usbmon.Event) bool { return ev.Bus == bus } }

// DeviceIs selects a device address.
func DeviceIs(dev uint8) Filter { return func(ev *usbmon.Event) bool { return ev.Device == dev } }

// EndpointIs selects an endpoint number (0..15, both directions).
func EndpointIs(ep uint8) Filter {
	return func(ev *usbmon.Event) bool { return ev.Endpoint == ep&0x0f }
}

// TransferIs selects a transfer type.
func TransferIs(t usbmon.TransferType) Filter {
	return func(ev *usbmon.Event) bool { return ev.Transfer == t }
}

// DirectionIs selects IN (true) or OUT (false) events.
func DirectionIs(in bool) Filter { return func(ev *usbmon.Event) bool { return ev.In == in } }

// StatusIs selects completions and submission errors with status st
// (submissions carry no status and never match).
func StatusIs(st int32) Filter {
	return func(ev *usbmon.Event) bool { return ev.Type != usbmon.Submission && ev.Status == st }
}

// DeviceIDIs selects events of devices whose VID:PID ids has learned.
// Because it asks ids at every event, it follows devices that enumerate
// during the capture as soon as their device descriptor has been seen.
func DeviceIDIs(ids *Identities, vendor, product uint16) Filter {
	return func(ev *usbmon.Event) bool {
		d, ok := ids.Lookup(ev.Bus, ev.Device)
		return ok && d.HasID && d.Vendor == vendor && d.Product == product
	}
}

// TimeRange selects events with from <= t < to, t in microseconds (see
// Micros). With relative set, t is measured from the first event the
// filter sees. A zero to means no upper bound.
func TimeRange(from, to int64, relative bool) Filter {
	var start int64
	seen := false
	return func(ev *usbmon.Event) bool {
		t := Micros(ev)
		if relative {
			if !seen {
				start, seen = t, true
			}
			t = elapsed(start, t, ev.Fields&usbmon.HasWallClock == 0)
		}
		return t >= from && (to == 0 || t < to)
	}
}

// ParseTransferType accepts ctrl|control, bulk, intr|interrupt, iso|isochronous
// and the text API letters C, B, I, Z.
func ParseTransferType(s string) (usbmon.TransferType, error) {
	switch strings.ToLower(s) {
	case "ctrl", "control", "c":
		return usbmon.Control, nil
	case "bulk", "b":
		return usbmon.Bulk, nil
	case "intr", "interrupt", "int", "i":
		return usbmon.Interrupt, nil
	case "iso", "isoc", "isochronous", "z":
		return usbmon.Isochronous, nil
	}
	return 0, fmt.Errorf("usb: transfer type %q: want ctrl, bulk, intr or iso", s)
}

// ParseVIDPID parses "VVVV:PPPP" (hexadecimal, as lsusb prints it).
func ParseVIDPID(s string) (vendor, product uint16, err error) {
	v, p, ok := strings.Cut(s, ":")
	if ok {
		a, err1 := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
		b, err2 := strconv.ParseUint(strings.TrimPrefix(p, "0x"), 16, 16)
		if err1 == nil && err2 == nil {
			return uint16(a), uint16(b), nil
		}
	}
	return 0, 0, fmt.Errorf("usb: vendor:product %q: want hexadecimal VVVV:PPPP", s)
}

// Learning returns f preceded by pairing every event and teaching ids what
// enumeration reveals (device descriptors read while the events stream by),
// so that a [DeviceIDIs] filter over ids follows devices that enumerate
// during a live capture. The returned filter must see every event, in order.
func Learning(f Filter, ids *Identities) Filter {
	pairer := NewPairer()
	return func(ev *usbmon.Event) bool {
		p, ok := pairer.Add(ev)
		ids.Learn(ev, p, ok)
		return f.Match(ev)
	}
}

// WindowFilter keeps the events inside a time window written in the
// project's one syntax (internal/timerange.Spec), resolved on the capture
// at its first event: relative times count from the first event; @T is
// the capture's own clock (seconds since the epoch for pcap, pcapng and
// binary captures; for text, the stamp as printed, unwrapped past each
// 4096 s wrap); RFC 3339 times need wall-clock stamps. usbmon captures
// carry no markers: mark:NAME is refused by NewWindowFilter.
//
// The filter must see every event, in order, before any other filter
// (Selection.Filter puts it first): the window is resolved at the
// capture's first event, and PastEnd looks at its latest.
type WindowFilter struct {
	spec     timerange.Spec
	resolved bool
	win      timerange.Window
	err      error
	last     int64 // unwrapped text stamp, ns
	end      int64 // the time of the latest event seen
}

// NewWindowFilter returns the filter of spec.
func NewWindowFilter(spec timerange.Spec) (*WindowFilter, error) {
	if len(spec.Marks()) > 0 {
		return nil, errors.New("usbmon captures carry no markers: mark:NAME works on mmiotrace logs, user_events and timeline")
	}
	return &WindowFilter{spec: spec}, nil
}

// Keep is the Filter.
func (w *WindowFilter) Keep(ev *usbmon.Event) bool {
	var t int64
	wall := ev.Fields&usbmon.HasWallClock != 0
	if wall {
		t = ev.Sec*1e9 + int64(ev.Usec)*1e3
	} else {
		stamp := int64(ev.TextStamp) * 1e3
		if !w.resolved {
			w.last = stamp
		} else {
			d := stamp - w.last%(textStampWrap*1e3)
			if d < -textStampWrap*1e3/2 {
				d += textStampWrap * 1e3
			} else if d > textStampWrap*1e3/2 {
				d -= textStampWrap * 1e3
			}
			w.last += d
		}
		t = w.last
	}
	if !w.resolved {
		w.resolved = true
		w.win, w.err = w.spec.Resolve(timerange.Clock{Start: t, HasStart: true, HasWall: wall})
		w.end = t
	}
	w.end = max(w.end, t) // the latest: events may come out of order
	return w.err == nil && w.win.Contains(t)
}

// PastEnd says, after the capture was read to its end, that the window
// starts after its latest event (not the last read: events may come out
// of order): the window holds no event because the capture ended before
// it (as cut.Result.PastEnd).
func (w *WindowFilter) PastEnd() bool {
	return w.resolved && w.err == nil && w.win.HasFrom && w.end < w.win.From
}

// Err is the error of resolving the window on the capture (a wall-clock
// time on a text capture, ends out of order); the filter then keeps
// nothing.
func (w *WindowFilter) Err() error { return w.err }

// LiveFilter is the filter of a live capture ('iotap usb capture --vidpid
// VVVV:PPPP --dev N'): vidpid, when not "", keeps the events of devices
// with that VID:PID — identified from sysfs (root, usually
// DefaultSysfsRoot) for the devices present, and from their enumeration
// as it is captured for the others; dev, when not 0, keeps device address
// dev. It returns nil (every event) with neither. The filter learns from
// every event: give it all of them, in order.
func LiveFilter(root, vidpid string, dev uint8) (Filter, error) {
	var fs []Filter
	var ids *Identities
	if vidpid != "" {
		v, p, err := ParseVIDPID(vidpid)
		if err != nil {
			return nil, err
		}
		ids = NewIdentities()
		if err := ids.AddSysfs(root); err != nil {
			return nil, err
		}
		fs = append(fs, DeviceIDIs(ids, v, p))
	}
	if dev != 0 {
		fs = append(fs, DeviceIs(dev))
	}
	f := All(fs...)
	if f != nil && ids != nil {
		f = Learning(f, ids)
	}
	return f, nil
}
