package timeline

import (
	"fmt"
	"io"
	"sort"
	"time"
)

// The overview of a split timeline (see ExportSplit): per input, counts of
// events in time buckets, written as counter tracks once the inputs are
// read. Every bucket holds exact counts; buckets only ever merge two by
// two (when the capture outgrows them), so the sums over time stay exact.

const (
	// ovBuckets is the most buckets a series holds while reading: the
	// bucket width doubles (from ovBaseWidth) whenever the capture would
	// need more. About the pixels of a wide screen.
	ovBuckets = 2048
	// ovBaseWidth is the narrowest bucket, 1 µs.
	ovBaseWidth = 1000
	// maxOvSeries bounds the series of one input (registers, endpoints,
	// event names); what comes after is counted in its group's series only.
	maxOvSeries = 1024
	// maxOvInstants bounds the markers and loss instants the overview
	// keeps; beyond, they are counted (markers and lost-events counters stay
	// exact).
	maxOvInstants = 1 << 16
	// topRegisters is how many registers of each BAR (and functions of an
	// Intel PT calls input) get their own counter.
	topRegisters = 8
	// ptFuncGroup is the group of the Intel PT time-per-function series.
	ptFuncGroup = "time per function"
)

// overviewer is a source that counts its events in overview series
// (after drawing each).
type overviewer interface {
	overview(oi *ovInput, ts uint64)
}

// ovSeries counts one thing over time.
type ovSeries struct {
	in      *ovInput
	group   string // the parent track under the input ("" for the input's own)
	name    string // the counter track's name
	unit    CounterUnit
	unitStr string // "/s", "B/s"
	// kind says how the series is chosen for the overview: register
	// series of a BAR compete for the top places (rank by total).
	kind    ovKind
	buckets []uint64
	total   uint64
	win     uint64 // count in the current detail window
	inWin   bool
}

type ovKind uint8

const (
	ovPlain ovKind = iota
	ovRegister
	ovBytes // not an event count (not ranked as activity)
	ovGroup // the sum of a group's series (a BAR's accesses): not ranked
	ovTime  // ns spent (a function's calls): the busiest per group are shown, not ranked as activity
)

// ovInput is the overview of one input.
type ovInput struct {
	ov     *overview
	in     *InputStats
	events *ovSeries
	lost   *ovSeries
	series []*ovSeries
	full   int64 // series refused because maxOvSeries was reached
}

type ovInstant struct {
	ts     uint64
	input  *ovInput // nil: a marker
	name   string
	text   string
	origin string
	n      uint64
}

// overview is the state of all inputs' overviews.
type overview struct {
	started  bool
	start    uint64 // first bucket's start
	width    uint64 // bucket width, ns
	nb       int    // buckets in use
	inputs   []*ovInput
	markers  int64
	instants []ovInstant
	dropped  int64 // instants beyond maxOvInstants
	touched  []*ovSeries

	// the bucket index returned last, for the times [lastLo, lastHi)
	lastLo, lastHi uint64
	lastI          int
}

func newOverview() *overview { return &overview{width: ovBaseWidth} }

func (o *overview) input(in *InputStats) *ovInput {
	oi := &ovInput{ov: o, in: in}
	oi.events = oi.newSeries("", "events/s", ovPlain)
	o.inputs = append(o.inputs, oi)
	return oi
}

// newSeries returns a new series, or nil when the input has maxOvSeries.
func (oi *ovInput) newSeries(group, name string, kind ovKind) *ovSeries {
	if len(oi.series) >= maxOvSeries {
		oi.full++
		return nil
	}
	s := &ovSeries{in: oi, group: group, name: name, unit: UnitCount, unitStr: "/s", kind: kind}
	switch kind {
	case ovBytes:
		s.unit, s.unitStr = UnitSizeBytes, "B/s"
	case ovTime:
		s.unit, s.unitStr = UnitTimeNS, "ns/s"
	}
	oi.series = append(oi.series, s)
	return s
}

// index returns the bucket of ts, merging buckets while ts is beyond the
// last one.
func (o *overview) index(ts uint64) int {
	if ts >= o.lastLo && ts < o.lastHi {
		return o.lastI
	}
	if !o.started {
		o.started = true
		o.start = ts
	}
	if ts < o.start {
		ts = o.start // a counter flushed late; cannot happen for events
	}
	i := (ts - o.start) / o.width
	for i >= ovBuckets {
		o.coarsen()
		i = (ts - o.start) / o.width
	}
	if int(i) >= o.nb {
		o.nb = int(i) + 1
	}
	o.lastLo = o.start + i*o.width
	o.lastHi = o.lastLo + o.width
	o.lastI = int(i)
	return int(i)
}

// coarsen doubles the bucket width, merging buckets two by two.
func (o *overview) coarsen() {
	for _, oi := range o.inputs {
		for _, s := range oi.series {
			b := s.buckets
			n := (len(b) + 1) / 2
			for i := 0; i < n; i++ {
				v := b[2*i]
				if 2*i+1 < len(b) {
					v += b[2*i+1]
				}
				b[i] = v
			}
			s.buckets = b[:n]
		}
	}
	o.width *= 2
	o.nb = (o.nb + 1) / 2
	o.lastLo, o.lastHi = 0, 0
}

// add counts v at ts in s (nil: not tracked).
func (o *overview) add(s *ovSeries, ts uint64, v uint64) {
	if s == nil {
		return
	}
	i := o.index(ts)
	if i >= len(s.buckets) {
		if i < cap(s.buckets) {
			n := len(s.buckets)
			s.buckets = s.buckets[:i+1]
			clear(s.buckets[n:])
		} else {
			nb := make([]uint64, i+1, max(2*cap(s.buckets), min(i+1+64, ovBuckets)))
			copy(nb, s.buckets)
			s.buckets = nb
		}
	}
	s.buckets[i] += v
	s.total += v
	s.win += v
	if !s.inWin {
		s.inWin = true
		o.touched = append(o.touched, s)
	}
}

// addSpan adds the time [t0, t1) to s, split over the buckets it covers
// (nil: not tracked).
func (o *overview) addSpan(s *ovSeries, t0, t1 uint64) {
	if s == nil || t1 <= t0 {
		return
	}
	o.index(t1 - 1) // widen the buckets first: the span's are then final
	if t0 < o.start {
		t0 = o.start
	}
	for t0 < t1 {
		i := o.index(t0)
		hi := min(o.start+uint64(i+1)*o.width, t1)
		o.add(s, t0, hi-t0)
		t0 = hi
	}
}

func (o *overview) instant(it ovInstant) {
	if len(o.instants) >= maxOvInstants {
		o.dropped++
		return
	}
	o.instants = append(o.instants, it)
}

func (o *overview) marker(ts uint64, origin string, text []byte) {
	o.markers++
	o.instant(ovInstant{ts: ts, text: string(text), origin: origin})
}

func (o *overview) lostAt(oi *ovInput, ts, n uint64) {
	if oi.lost == nil {
		oi.lost = &ovSeries{in: oi, name: "lost events/s", unit: UnitCount, unitStr: "/s"}
		oi.series = append(oi.series, oi.lost) // always kept: loss is never hidden
	}
	o.add(oi.lost, ts, n)
	o.instant(ovInstant{ts: ts, input: oi, name: "events lost", n: n})
}

// Activity is one series' count in a detail window.
type Activity struct {
	Input  string `json:"input"`
	Track  string `json:"track"`
	Events uint64 `json:"events"`
}

// windowTop returns the n series with the most events since the last
// call (events/s of an input and byte counts excluded), and starts a new
// window.
func (o *overview) windowTop(n int) []Activity {
	var cand []*ovSeries
	for _, s := range o.touched {
		if s.kind != ovBytes && s.kind != ovGroup && s.kind != ovTime && s != s.in.events && s != s.in.lost {
			cand = append(cand, s)
		}
	}
	sort.SliceStable(cand, func(i, j int) bool { return cand[i].win > cand[j].win })
	var top []Activity
	for i := 0; i < len(cand) && i < n; i++ {
		s := cand[i]
		name := s.name
		if s.group != "" {
			name = s.group + " " + name
		}
		top = append(top, Activity{Input: s.in.in.shown(), Track: name, Events: s.win})
	}
	for _, s := range o.touched {
		s.win, s.inWin = 0, false
	}
	o.touched = o.touched[:0]
	return top
}

// ovWindow is a detail window as the overview shows it.
type ovWindow struct {
	file       string
	start, end uint64
	events     int64
	bytes      int64
}

// selected returns the series of oi that the overview shows: all but the
// register and function-time series, of which the topRegisters busiest
// per group.
func (oi *ovInput) selected() []*ovSeries {
	byGroup := map[string][]*ovSeries{}
	var out []*ovSeries
	for _, s := range oi.series {
		if s.kind == ovRegister || s.kind == ovTime {
			byGroup[s.group] = append(byGroup[s.group], s)
			continue
		}
		out = append(out, s)
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		rs := byGroup[g]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].total > rs[j].total })
		if len(rs) > topRegisters {
			rs = rs[:topRegisters]
		}
		out = append(out, rs...)
	}
	return out
}

// write writes the overview trace: per input a track with its counters
// (in groups), loss and marker instants, and a track of the detail
// windows, each a slice naming its file.
func (o *overview) write(out io.Writer, wins []ovWindow) WriterStats {
	w := NewWriter(out)
	winTrack := w.Track(0, "detail windows", TrackOptions{Rank: -2,
		Description: "each slice is a time window whose full detail is in the file it names"})
	markers := uint64(0)
	for _, win := range wins {
		w.Begin(winTrack, win.start, "window", win.file, Str("file", win.file),
			Int("events", win.events), Int("bytes", win.bytes))
		w.End(winTrack, win.end)
	}
	width := float64(o.width)
	bucketEnd := o.start + uint64(o.nb)*o.width
	for _, oi := range o.inputs {
		top := w.Track(0, topName(oi.in), TrackOptions{
			Description: fmt.Sprintf("%s (%s): counts per %v bucket", oi.in.shown(), oi.in.Format, time.Duration(o.width))})
		groups := map[string]uint64{}
		for _, s := range oi.selected() {
			parent := top
			if s.group != "" {
				g, ok := groups[s.group]
				if !ok {
					g = w.Track(top, s.group, TrackOptions{})
					groups[s.group] = g
				}
				parent = g
			}
			name := s.name
			if s.group != "" {
				name = s.group + " " + s.name
			}
			t := w.Track(parent, name, TrackOptions{Counter: true, Unit: s.unit, UnitName: s.unitStr,
				Description: fmt.Sprintf("total %d, per %v bucket", s.total, time.Duration(o.width))})
			prev := -1.0
			for i := 0; i < o.nb; i++ {
				var c uint64
				if i < len(s.buckets) {
					c = s.buckets[i]
				}
				v := float64(c) * 1e9 / width
				if v != prev {
					w.Counter(t, o.start+uint64(i)*o.width, v)
					prev = v
				}
			}
			if prev != 0 {
				w.Counter(t, bucketEnd, 0)
			}
		}
		for _, it := range o.instants {
			if it.input == oi {
				w.Instant(top, it.ts, "loss", it.name, Uint("lost", it.n))
			}
		}
		if oi.in.Truncated {
			w.Instant(top, oi.in.LastNS, "loss", "truncated", Str("where", oi.in.Truncation))
		}
	}
	for _, it := range o.instants {
		if it.input == nil {
			if markers == 0 {
				markers = w.Track(0, "markers", TrackOptions{Rank: -1})
			}
			w.Instant(markers, it.ts, "marker", "marker", Str("text", it.text), Str("from", it.origin))
		}
	}
	w.Close()
	return w.Stats()
}

func topName(in *InputStats) string {
	name, ok := map[Kind]string{KindUSB: "USB", KindMMIO: "MMIO", KindEvents: "user_events", KindPT: "Intel PT"}[in.Kind]
	if !ok {
		name = string(in.Kind)
	}
	name += " " + baseName(in.shown())
	if in.Stream != "" {
		name += " " + in.Stream
	}
	return name
}
