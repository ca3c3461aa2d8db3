// Package timerange parses the time windows of iotap's commands, the same
// way in every command: --from and --to (or one LO..HI value) take
//
//   - seconds, a decimal number: 1.5, 0.000250, 90;
//   - a Go duration: 200ms, 1m30s, 250us;
//   - an RFC 3339 wall-clock time: 2026-11-25T12:00:00.5Z (where the trace
//     has wall-clock timestamps).
//
// Seconds and durations are measured in the trace's own time base, which
// each command documents (from its first event, or the log's timestamps).
// The window is [from, to): an event at exactly to is outside it. Values
// must be finite, not negative, at most MaxSeconds, and from must be
// before to: a window that can hold nothing is an error, not an empty
// output.
package timerange

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxSeconds bounds relative values (about 31 years: beyond any trace,
// well inside int64 nanoseconds).
const MaxSeconds = 1e9

// Window is a parsed time window. Times are nanoseconds: relative to the
// trace's time base, or since the Unix epoch when Wall is set.
type Window struct {
	From, To       int64
	HasFrom, HasTo bool
	Wall           bool
}

// Set says whether either end is given.
func (w Window) Set() bool { return w.HasFrom || w.HasTo }

// Contains reports whether t (same base as the window) is inside it.
func (w Window) Contains(t int64) bool {
	return (!w.HasFrom || t >= w.From) && (!w.HasTo || t < w.To)
}

// String renders the window in the syntax Parse accepts.
func (w Window) String() string {
	f := func(has bool, ns int64) string {
		if !has {
			return ""
		}
		if w.Wall {
			return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
		}
		return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64)
	}
	return f(w.HasFrom, w.From) + ".." + f(w.HasTo, w.To)
}

// Parse parses the values of --from and --to ("" leaves that end open).
// Errors name the flag and say what is accepted.
func Parse(from, to string) (Window, error) {
	var w Window
	var wallFrom, wallTo bool
	var err error
	if from != "" {
		if w.From, wallFrom, err = parseValue(from); err != nil {
			return Window{}, fmt.Errorf("--from: %w", err)
		}
		w.HasFrom = true
	}
	if to != "" {
		if w.To, wallTo, err = parseValue(to); err != nil {
			return Window{}, fmt.Errorf("--to: %w", err)
		}
		w.HasTo = true
	}
	if w.HasFrom && w.HasTo && wallFrom != wallTo {
		return Window{}, errors.New("--from and --to must both be wall-clock (RFC 3339) times or both be seconds/durations")
	}
	w.Wall = wallFrom || wallTo
	if w.HasFrom && w.HasTo && w.From >= w.To {
		return Window{}, fmt.Errorf("--from %s is not before --to %s: the window [from, to) holds nothing", from, to)
	}
	if w.HasTo && !w.Wall && w.To == 0 {
		return Window{}, errors.New("--to 0: the window [from, to) holds nothing")
	}
	return w, nil
}

// ParseRange parses "LO..HI" (either end may be empty) with the syntax of
// Parse.
func ParseRange(s string) (Window, error) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		return Window{}, fmt.Errorf("%q: want LO..HI (either may be empty): seconds, a duration (200ms) or an RFC 3339 time", s)
	}
	w, err := Parse(lo, hi)
	if err != nil {
		return Window{}, fmt.Errorf("%q: %w", s, err)
	}
	return w, nil
}

func parseValue(s string) (ns int64, wall bool, err error) {
	return parseValueMax(s, MaxSeconds)
}

// MaxAbsolute bounds @T values: traces stamped with Unix-epoch seconds
// (pcap) are written so, up to the year 2286.
const MaxAbsolute = 1e10

func parseValueMax(s string, maxSeconds float64) (ns int64, wall bool, err error) {
	if ns, ok := exactSeconds(s); ok && float64(ns) <= maxSeconds*1e9 {
		return ns, false, nil
	}
	if f, perr := strconv.ParseFloat(s, 64); perr == nil || errors.Is(perr, strconv.ErrRange) {
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0) || errors.Is(perr, strconv.ErrRange):
			return 0, false, fmt.Errorf("%q is not a finite number of seconds", s)
		case f < 0:
			return 0, false, fmt.Errorf("%q: negative time", s)
		case f > maxSeconds:
			return 0, false, fmt.Errorf("%q: more than %g seconds (give an RFC 3339 time for a wall-clock instant)", s, maxSeconds)
		}
		return int64(math.Round(f * 1e9)), false, nil
	}
	if d, derr := time.ParseDuration(s); derr == nil {
		if d < 0 {
			return 0, false, fmt.Errorf("%q: negative time", s)
		}
		if float64(d) > maxSeconds*1e9 { // time.Duration(1e10 s) overflows int64
			return 0, false, fmt.Errorf("%q: more than %g seconds", s, maxSeconds)
		}
		return int64(d), false, nil
	} else if strings.Contains(derr.Error(), "overflow") {
		return 0, false, fmt.Errorf("%q: out of range", s)
	}
	if t, terr := time.Parse(time.RFC3339Nano, s); terr == nil {
		if t.Year() < 1970 || t.Year() > 2200 {
			return 0, false, fmt.Errorf("%q: wall-clock time out of range", s)
		}
		return t.UnixNano(), true, nil
	}
	return 0, false, fmt.Errorf("%q: want seconds (1.5), a duration (200ms, 1m30s) or an RFC 3339 time (2026-11-25T12:00:00Z)", s)
}

// exactSeconds parses plain decimal seconds (12.345678, at most 9
// fractional digits) exactly: a float64 would round epoch times by
// hundreds of nanoseconds.
func exactSeconds(s string) (int64, bool) {
	sec, frac, _ := strings.Cut(s, ".")
	if sec == "" || len(sec) > 11 || len(frac) > 9 {
		return 0, false
	}
	var ns int64
	for _, c := range sec {
		if c < '0' || c > '9' {
			return 0, false
		}
		ns = ns*10 + int64(c-'0')
	}
	ns *= 1e9
	scale := int64(1e8)
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, false
		}
		ns += int64(c-'0') * scale
		scale /= 10
	}
	return ns, true
}
