package timerange

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Base says what a time value is measured from.
type Base uint8

// The bases of a time value.
const (
	// Relative: seconds or a duration from the capture's start (its first
	// timed record). Written bare (1.5, 200ms) or with a '+' (+1.5).
	Relative Base = iota
	// Absolute: the trace's own clock, as the trace prints it, written
	// with a leading '@' (@12.345678 is the mmiotrace line stamped
	// 12.345678; in pcap/pcapng it is seconds since the Unix epoch).
	Absolute
	// WallClock: an RFC 3339 time (traces with wall-clock stamps only).
	WallClock
	// Mark: the time of a marker, written mark:NAME (an mmiotrace MARK
	// line, an iotap_marker user event, a capture marker). The first
	// marker whose text is NAME is used, else the first whose text starts
	// with NAME.
	Mark
	// AfterFrom: --to +D is D after --from (after the capture's start
	// when there is no --from).
	AfterFrom
)

// String names the base as messages do.
func (b Base) String() string {
	switch b {
	case Relative:
		return "relative"
	case Absolute:
		return "absolute"
	case WallClock:
		return "wall-clock"
	case Mark:
		return "marker"
	case AfterFrom:
		return "after --from"
	}
	return "Base(" + strconv.Itoa(int(b)) + ")"
}

// Point is one end of a window as written: a value and what it is
// measured from. NS is nanoseconds (since the capture start, on the
// trace's clock, or since the Unix epoch); Mark is the marker name.
type Point struct {
	Base Base
	NS   int64
	Mark string
}

// String renders the point in the syntax ParsePoint accepts.
func (p Point) String() string {
	switch p.Base {
	case Absolute:
		return "@" + strconv.FormatFloat(float64(p.NS)/1e9, 'f', -1, 64)
	case WallClock:
		return time.Unix(0, p.NS).UTC().Format(time.RFC3339Nano)
	case Mark:
		return "mark:" + p.Mark
	case AfterFrom:
		return "+" + strconv.FormatFloat(float64(p.NS)/1e9, 'f', -1, 64)
	}
	return strconv.FormatFloat(float64(p.NS)/1e9, 'f', -1, 64)
}

// Spec is a window as the user wrote it, before it is placed on a trace's
// clock by Resolve. It is the one syntax of --from and --to in every
// command:
//
//	1.5  200ms  1m30s      from the capture's start (its first record)
//	+2s                    (--to only) 2 s after --from
//	@12.345678             the trace's own clock, as the trace prints it
//	2026-11-25T12:00:00Z   wall clock (pcap, pcapng, binary usbmon)
//	mark:probe done        the first marker named "probe done"
type Spec struct {
	From, To       Point
	HasFrom, HasTo bool
}

// Set says whether either end is given.
func (s Spec) Set() bool { return s.HasFrom || s.HasTo }

// Marks returns the marker names the spec needs.
func (s Spec) Marks() []string {
	var m []string
	if s.HasFrom && s.From.Base == Mark {
		m = append(m, s.From.Mark)
	}
	if s.HasTo && s.To.Base == Mark && (len(m) == 0 || m[0] != s.To.Mark) {
		m = append(m, s.To.Mark)
	}
	return m
}

// NeedsWall says whether an end is a wall-clock time.
func (s Spec) NeedsWall() bool {
	return (s.HasFrom && s.From.Base == WallClock) || (s.HasTo && s.To.Base == WallClock)
}

// String renders the spec as LO..HI.
func (s Spec) String() string {
	f := func(has bool, p Point) string {
		if !has {
			return ""
		}
		return p.String()
	}
	return f(s.HasFrom, s.From) + ".." + f(s.HasTo, s.To)
}

// ParseSpec parses the values of --from and --to ("" leaves that end
// open). Ends of the same base must be ordered (from before to); ends of
// different bases are checked by Resolve.
func ParseSpec(from, to string) (Spec, error) {
	var s Spec
	var err error
	if from != "" {
		if s.From, err = ParsePoint(from); err != nil {
			return Spec{}, fmt.Errorf("--from: %w", err)
		}
		s.HasFrom = true
	}
	if to != "" {
		if s.To, err = ParsePoint(to); err != nil {
			return Spec{}, fmt.Errorf("--to: %w", err)
		}
		s.HasTo = true
		if strings.HasPrefix(to, "+") {
			s.To.Base = AfterFrom
			if s.To.NS == 0 {
				return Spec{}, errors.New("--to +0: the window [from, to) holds nothing")
			}
		}
		if s.To.Base == Relative && s.To.NS == 0 {
			return Spec{}, errors.New("--to 0: the window [from, to) holds nothing")
		}
	}
	if s.HasFrom && s.HasTo && s.From.Base == s.To.Base {
		if s.From.Base == Mark && s.From.Mark == s.To.Mark || s.From.Base != Mark && s.From.NS >= s.To.NS {
			return Spec{}, fmt.Errorf("--from %s is not before --to %s: the window [from, to) holds nothing", from, to)
		}
	}
	return s, nil
}

// ParseSpecRange parses "LO..HI" (either end may be empty).
func ParseSpecRange(v string) (Spec, error) {
	lo, hi, ok := strings.Cut(v, "..")
	if !ok {
		return Spec{}, fmt.Errorf("%q: want LO..HI (either may be empty)", v)
	}
	s, err := ParseSpec(lo, hi)
	if err != nil {
		return Spec{}, fmt.Errorf("%q: %w", v, err)
	}
	return s, nil
}

// ParsePoint parses one time value (see Spec).
func ParsePoint(v string) (Point, error) {
	switch {
	case strings.HasPrefix(v, "mark:"):
		name := v[len("mark:"):]
		if name == "" {
			return Point{}, errors.New(`"mark:": give the marker's name, e.g. mark:probe done`)
		}
		return Point{Base: Mark, Mark: name}, nil
	case strings.HasPrefix(v, "@"):
		ns, wall, err := parseValueMax(v[1:], MaxAbsolute)
		if err != nil {
			return Point{}, err
		}
		if wall {
			return Point{}, fmt.Errorf("%q: '@' takes the trace's own time in seconds (@12.5), not an RFC 3339 time", v)
		}
		return Point{Base: Absolute, NS: ns}, nil
	case strings.HasPrefix(v, "+"):
		ns, wall, err := parseValue(v[1:])
		if err != nil || wall {
			if err == nil {
				err = fmt.Errorf("%q: '+' takes seconds or a duration", v)
			}
			return Point{}, err
		}
		return Point{Base: Relative, NS: ns}, nil
	}
	ns, wall, err := parseValue(v)
	if err != nil {
		return Point{}, fmt.Errorf("%w, @T on the trace's clock, or mark:NAME", err)
	}
	if wall {
		return Point{Base: WallClock, NS: ns}, nil
	}
	return Point{Base: Relative, NS: ns}, nil
}

// Clock is what Resolve needs to know of a trace. Times are nanoseconds on
// the trace's own clock (the clock Absolute values are written in).
type Clock struct {
	// Start is the time of the capture's first timed record (HasStart
	// false for a trace with none: relative ends then resolve to nothing).
	Start    int64
	HasStart bool
	// WallOffset, when HasWall, turns a Unix-epoch time into the trace's
	// clock: trace = epoch + WallOffset (0 for pcap/pcapng).
	WallOffset int64
	HasWall    bool
	// Marker returns the time of the marker named name (see Mark), false
	// when the trace has none.
	Marker func(name string) (int64, bool)
}

// Resolve places the spec on a trace's clock: the Window it returns has
// From/To in the trace's clock (Wall false). A marker that is missing, a
// wall-clock time on a trace without one, or ends that resolve out of
// order are errors.
func (s Spec) Resolve(c Clock) (Window, error) {
	var w Window
	var err error
	if s.HasFrom {
		if w.From, err = s.From.resolve(c); err != nil {
			return Window{}, fmt.Errorf("--from: %w", err)
		}
		w.HasFrom = true
	}
	if s.HasTo && s.To.Base == AfterFrom {
		start := Point{Base: Relative}
		if s.HasFrom {
			start = s.From
		}
		t, err := start.resolve(c)
		if err != nil {
			return Window{}, fmt.Errorf("--to: %w", err)
		}
		w.To, w.HasTo = satAdd(t, s.To.NS), true
	} else if s.HasTo {
		if w.To, err = s.To.resolve(c); err != nil {
			return Window{}, fmt.Errorf("--to: %w", err)
		}
		w.HasTo = true
	}
	if w.HasFrom && w.HasTo && w.From >= w.To {
		return Window{}, fmt.Errorf("--from %s is not before --to %s on this trace: the window [from, to) holds nothing", s.From, s.To)
	}
	return w, nil
}

func (p Point) resolve(c Clock) (int64, error) {
	switch p.Base {
	case Relative:
		if !c.HasStart {
			// No timed record: any relative time is past the end, in
			// order (--from 0 --to 100 is an empty window, not a
			// reversed one).
			return satAdd(noStart, p.NS), nil
		}
		return satAdd(c.Start, p.NS), nil
	case Absolute:
		return p.NS, nil
	case WallClock:
		if !c.HasWall {
			return 0, fmt.Errorf("%s: this trace has no wall-clock timestamps: give seconds from its start, @T on its clock, or mark:NAME", p)
		}
		return satAdd(p.NS, c.WallOffset), nil
	case Mark:
		if c.Marker != nil {
			if t, ok := c.Marker(p.Mark); ok {
				return t, nil
			}
		}
		return 0, fmt.Errorf("mark:%s: no marker of that name in the trace", p.Mark)
	}
	return 0, fmt.Errorf("bad time base %d", p.Base)
}

// noStart is where the times from the start of a trace without a timed
// record begin: past every time such a trace can hold.
const noStart = math.MaxInt64 / 2

func satAdd(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// MatchMarker is the rule of mark:NAME over a trace's markers in order:
// the first whose text is name, else the first whose text starts with
// name. It returns the index in texts, or -1.
func MatchMarker(texts []string, name string) int {
	prefix := -1
	for i, t := range texts {
		if t == name {
			return i
		}
		if prefix < 0 && strings.HasPrefix(t, name) {
			prefix = i
		}
	}
	return prefix
}

// ParseSpecFlags parses --from, --to and --time LO..HI, the window in
// one flag (ParseSpecRange): one or the other.
func ParseSpecFlags(from, to, lohi string) (Spec, error) {
	spec, err := ParseSpec(from, to)
	if err != nil || lohi == "" {
		return spec, err
	}
	if spec.Set() {
		return spec, errors.New("--time LO..HI is --from LO --to HI: give one or the other")
	}
	spec, err = ParseSpecRange(lohi)
	if err != nil {
		err = fmt.Errorf("--time: %w", err)
	}
	return spec, err
}

// PastEndMessage is what a reader of the input named name says when the
// window s starts after the input's last record: it holds no event
// because the input ended before it (a warning; the command exits 0).
// cut, the windowed readers, usb read/pair/stats and events read say it
// alike.
func PastEndMessage(name string, s Spec) string {
	return fmt.Sprintf("%s: the window [%s) starts after the input's last record: 0 events kept", name, s)
}
