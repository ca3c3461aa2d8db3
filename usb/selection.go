package usb

import (
	"fmt"
	"strings"

	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/usbmon"
)

// Selection is the event selection of 'iotap usb read', 'stats' and
// 'pair' in the form its flags give it: the fields are the flags --bus,
// --dev, --ep, --type, --dir, --status, --vidpid, -Y, --from and --to,
// and Filter's errors name them.
type Selection struct {
	Bus, Device, Endpoint int    // -1: any
	Type                  string // ctrl, bulk, intr or iso ("": any)
	Dir                   string // in or out ("": both)
	Status                string // a number, an errno name or stall ("": any)
	VIDPID                string // VVVV:PPPP ("": any device)
	Expr                  string // a display-filter expression (ParseFilter)
	From, To              string // a time window (internal/timerange syntax)
}

// AnySelection selects every event.
func AnySelection() Selection { return Selection{Bus: -1, Device: -1, Endpoint: -1} }

// Filter returns the filter of s; ids serves VIDPID (the identities the
// pipeline learns). wf is the time window's filter (nil without From and
// To): its Err says, after the run, whether the window could be resolved
// on the capture.
func (s Selection) Filter(ids *Identities) (f Filter, wf *WindowFilter, err error) {
	var fs []Filter
	if s.Bus >= 0 {
		if s.Bus > 0xffff {
			return nil, nil, fmt.Errorf("--bus %d out of range", s.Bus)
		}
		fs = append(fs, BusIs(uint16(s.Bus)))
	}
	if s.Device >= 0 {
		if s.Device > 127 {
			return nil, nil, fmt.Errorf("--dev %d out of range 0..127", s.Device)
		}
		fs = append(fs, DeviceIs(uint8(s.Device)))
	}
	if s.Endpoint >= 0 {
		if s.Endpoint > 15 {
			return nil, nil, fmt.Errorf("--ep %d out of range 0..15", s.Endpoint)
		}
		fs = append(fs, EndpointIs(uint8(s.Endpoint)))
	}
	if s.Type != "" {
		t, err := ParseTransferType(s.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("--type: %v", err)
		}
		fs = append(fs, TransferIs(t))
	}
	switch strings.ToLower(s.Dir) {
	case "":
	case "in":
		fs = append(fs, DirectionIs(true))
	case "out":
		fs = append(fs, DirectionIs(false))
	default:
		return nil, nil, fmt.Errorf("--dir %q: want in or out", s.Dir)
	}
	if s.Status != "" {
		st, ok := ParseStatus(s.Status)
		if !ok {
			return nil, nil, fmt.Errorf("--status %q: want a number, an errno name (EPIPE, ENOENT, ...) or stall", s.Status)
		}
		fs = append(fs, StatusIs(st))
	}
	if s.VIDPID != "" {
		v, p, err := ParseVIDPID(s.VIDPID)
		if err != nil {
			return nil, nil, fmt.Errorf("--vidpid: %v", err)
		}
		fs = append(fs, DeviceIDIs(ids, v, p))
	}
	if s.Expr != "" {
		f, err := ParseFilter(s.Expr, ids)
		if err != nil {
			return nil, nil, fmt.Errorf("-Y: %v", err)
		}
		fs = append(fs, f)
	}
	spec, err := timerange.ParseSpec(s.From, s.To)
	if err != nil {
		return nil, nil, err
	}
	if spec.Set() {
		if wf, err = NewWindowFilter(spec); err != nil {
			return nil, nil, err
		}
		// first: the window is placed on the capture's first event,
		// not on the first one the other filters keep
		fs = append([]Filter{wf.Keep}, fs...)
	}
	return All(fs...), wf, nil
}

// WallClock says whether From or To is a wall-clock (RFC 3339) time,
// which usbmon text captures cannot resolve: their stamps are not
// wall-clock times.
func (s Selection) WallClock() bool {
	return isWallClock(s.From) || isWallClock(s.To)
}

func isWallClock(s string) bool {
	w, err := timerange.Parse(s, "")
	return s != "" && err == nil && w.Wall
}

// Loss lists what the run of the pipeline ending with readErr (Each's
// error) lost: a truncated input, text lines skipped, events the kernel
// dropped. Any other read error is returned as err, and before it a time
// window of the Selection (Prepare) that the capture could not resolve
// (matching ErrSelection).
func (pl *Pipeline) Loss(readErr error) (lost []string, err error) {
	if pl.window != nil && pl.window.Err() != nil {
		return nil, &selectionError{pl.window.Err()}
	}
	return usbmon.ReaderLoss(pl.Reader, readErr)
}

// PastEnd is what a reader of the capture named name says when the
// pipeline read it to its end and the time window of the Selection
// starts after its last event (timerange.PastEndMessage, as cut and
// the windowed readers say it); "" otherwise. Call it after a run that
// ended without error.
func (pl *Pipeline) PastEnd(name string) string {
	if pl.window == nil || !pl.window.PastEnd() {
		return ""
	}
	return timerange.PastEndMessage(name, pl.window.spec)
}
