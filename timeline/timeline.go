package timeline

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/iotap/iotap/regdb"
	"github.com/iotap/iotap/usbmon"
)

// Kind is the source an input comes from.
type Kind string

// Source kinds.
const (
	KindUSB    Kind = "usb"
	KindMMIO   Kind = "mmio"
	KindEvents Kind = "events"
	KindPT     Kind = "pt"
)

// ErrUnknownFormat is returned for an input whose content is not a trace
// Export can read.
var ErrUnknownFormat = errors.New("not a usbmon, mmiotrace or user_events trace")

// Detect recognises the source of a trace from its first bytes (up to a
// few KiB): usbmon text, pcap or pcapng; mmiotrace logs, plain or
// compressed; user_events NDJSON (iotap events record --json); Intel PT.
func Detect(head []byte) (Kind, error) {
	switch {
	case len(head) == 0:
		return "", fmt.Errorf("empty input: %w", ErrUnknownFormat)
	case bytes.HasPrefix(head, []byte("PERFILE2")),
		bytes.HasPrefix(head, []byte{0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82}):
		return KindPT, nil
	case isCompressed(head) || looksLikeMmiotrace(head):
		return KindMMIO, nil
	case bytes.HasPrefix(head, []byte(`{"name":`)):
		return KindEvents, nil
	}
	if _, _, err := usbmon.NewReader(bytes.NewReader(head)); err == nil {
		return KindUSB, nil
	}
	return "", ErrUnknownFormat
}

func isCompressed(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) ||
		bytes.HasPrefix(b, []byte{0xfd, '7', 'z', 'X', 'Z', 0}) ||
		bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd})
}

func looksLikeMmiotrace(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	for _, p := range []string{"# tracer: mmiotrace", "VERSION ", "PCIDEV ", "MAP ", "MARK ", "LSPCI ", "R ", "W "} {
		if bytes.HasPrefix(line, []byte(p)) {
			return true
		}
	}
	return false
}

// Options configure Export.
type Options struct {
	// DB names MMIO registers. Without it, the shipped databases are used
	// for the PCI devices they declare.
	DB *regdb.DB
	// Clocks maps every source onto one clock. Without it each source's
	// first event is placed at time 0 (and Stats.Aligned is false).
	Clocks *Clocks
	// InputClocks gives some inputs (by the path passed to Export) their
	// own clocks file, which replaces Clocks for them: 'iotap report'
	// applies each capture directory's clocks.json to the files of that
	// directory only. The markers of every clocks file are shown.
	InputClocks map[string]*Clocks
	// BandwidthWindowNS is the window of the USB bandwidth counters
	// (default 100 ms).
	BandwidthWindowNS int64
	// Progress, when set, is called about twice a second with the input
	// bytes read so far and their total.
	Progress func(read, total int64)
	// Warn, when set, receives warnings (a missing clock, an input without
	// events...) as they happen. They are also in Stats.Warnings.
	Warn func(string)
}

// InputStats describes one input.
type InputStats struct {
	Path string `json:"path"`
	// Stream names one of several streams of the file (a perf.data
	// file's "cpu 2").
	Stream string `json:"stream,omitempty"`
	Kind   Kind   `json:"kind"`
	Format string `json:"format"`
	// Clock is the input's clock; OffsetNS what was added to map it onto
	// the timeline.
	Clock    string `json:"clock"`
	OffsetNS int64  `json:"offset_ns"`
	// Aligned is true when a clocks file gave the input its offset.
	Aligned bool  `json:"aligned"`
	Events  int64 `json:"events"`
	// Lost counts events the input itself records as lost (mmiotrace
	// "Lost N events" marks, ...); Skipped counts input the reader could
	// not decode and skipped.
	Lost    int64 `json:"lost"`
	Skipped int64 `json:"skipped"`
	// FirstNS and LastNS are the first and last event times on the
	// timeline.
	FirstNS uint64 `json:"first_ns"`
	LastNS  uint64 `json:"last_ns"`
	// Source-specific counts.
	Slices    int64 `json:"slices,omitempty"`      // USB transfers drawn as slices
	Unmatched int64 `json:"unmatched,omitempty"`   // USB submissions without completion
	Orphans   int64 `json:"orphans,omitempty"`     // USB completions without submission
	Named     int64 `json:"named,omitempty"`       // MMIO accesses named by a register database
	Accesses  int64 `json:"accesses,omitempty"`    // MMIO reads and writes
	Markers   int64 `json:"markers,omitempty"`     // markers the input carried
	NotTimed  int64 `json:"not_timed,omitempty"`   // records without a time (PT before its first TSC)
	Warnings  int64 `json:"warnings,omitempty"`    // warnings about this input
	Truncated bool  `json:"truncated,omitempty"`   // the input ends in the middle of a record
	Overflow  int64 `json:"overflow,omitempty"`    // USB submissions beyond the pending limit, not drawn
	Dropped   int64 `json:"pt_overflow,omitempty"` // PT OVF packets
}

// Stats is the result of Export.
type Stats struct {
	Inputs []*InputStats `json:"inputs"`
	// Aligned is true when a clocks file gave every input its offset.
	Aligned  bool        `json:"aligned"`
	Markers  int64       `json:"markers"`
	Warnings []string    `json:"warnings,omitempty"`
	Writer   WriterStats `json:"writer"`
}

// Lost returns the total of lost and skipped events over all inputs.
func (s *Stats) Lost() int64 {
	var n int64
	for _, in := range s.Inputs {
		n += in.Lost + in.Skipped + in.Dropped
		if in.Truncated {
			n++
		}
	}
	return n
}

// source is one input being merged. next reads the next event and
// returns its time on the source's own clock in nanoseconds; emit writes
// the event read last at ts (timeline time); finish ends what is still
// open at the end.
type source interface {
	next() (int64, error)
	emit(x *exporter, ts uint64)
	flush(x *exporter, now uint64)
	finish(x *exporter, ts uint64)
	close() error
	stats() *InputStats
}

// exporter is the state shared by the sources while exporting.
type exporter struct {
	w       *Writer
	opt     *Options
	stats   *Stats
	tops    []uint64 // every input's top track, for markers
	markers uint64   // the markers track
	read    int64    // input bytes read so far (regular files)
	total   int64    // input bytes in all
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func (x *exporter) warn(in *InputStats, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if in != nil {
		in.Warnings++
		msg = in.Path + ": " + msg
	}
	x.stats.Warnings = append(x.stats.Warnings, msg)
	if x.opt.Warn != nil {
		x.opt.Warn(msg)
	}
}

// marker shows a marker on every input's track and on the markers track.
func (x *exporter) marker(ts uint64, origin string, text []byte) {
	x.stats.Markers++
	for _, t := range x.tops {
		x.w.Instant(t, ts, "marker", "marker", Bytes("text", text), Str("from", origin))
	}
	x.w.Instant(x.markers, ts, "marker", "marker", Bytes("text", text), Str("from", origin))
}

// Export reads the traces at paths, merges their events on one clock and
// writes them to out as a Perfetto trace. Each input is streamed: memory
// does not grow with the inputs' size.
func Export(ctx context.Context, out io.Writer, paths []string, opt Options) (*Stats, error) {
	if opt.BandwidthWindowNS <= 0 {
		opt.BandwidthWindowNS = 100e6
	}
	anyClocks := opt.Clocks != nil || len(opt.InputClocks) > 0
	st := &Stats{Aligned: anyClocks}
	x := &exporter{w: NewWriter(out), opt: &opt, stats: st}
	var srcs []source
	defer func() {
		for _, s := range srcs {
			s.close()
		}
	}()
	for _, p := range paths {
		ss, err := openSource(p, x)
		if err != nil {
			return st, err
		}
		for _, s := range ss {
			srcs = append(srcs, s)
			st.Inputs = append(st.Inputs, s.stats())
		}
	}
	for _, c := range opt.allClocks(paths) {
		if len(c.Markers) > 0 {
			srcs = append(srcs, &markerSource{m: c.Markers, st: &InputStats{Path: "clocks", Kind: "markers"}})
		}
	}

	// Read every source's first event to learn its clock's origin.
	h := &mergeHeap{}
	offsets := make([]int64, len(srcs))
	min := int64(math.MaxInt64)
	for i, s := range srcs {
		raw, err := s.next()
		if err == io.EOF {
			x.warn(s.stats(), "no events")
			continue
		}
		if err != nil {
			return st, fmt.Errorf("%s: %w", s.stats().Path, err)
		}
		in := s.stats()
		if clk, ok := opt.clocksOf(in.Path).lookup(in.Path, in.Kind); ok {
			offsets[i] = clk.OffsetNS
			in.Aligned = true
			if clk.Clock != "" {
				in.Clock = clk.Clock
			}
		} else if in.Kind == "markers" {
			offsets[i] = 0
		} else {
			if anyClocks && opt.clocksOf(in.Path) == nil {
				x.warn(in, "no clocks file for this input: its first event is placed at the start")
				st.Aligned = false
			} else if anyClocks {
				x.warn(in, "no clock for this input in the clocks file: its first event is placed at the start")
				st.Aligned = false
			}
			offsets[i] = -raw
		}
		in.OffsetNS = offsets[i]
		t := raw + offsets[i]
		if t < min {
			min = t
		}
		h.items = append(h.items, mergeItem{t: t, idx: i})
	}
	if !anyClocks && len(paths) > 1 {
		x.warn(nil, "no clocks file: sources are not aligned, each starts at time 0 (capture with 'iotap capture' to record clocks.json)")
	}
	// Timeline time is the common clock's, shifted when some source
	// would fall before 0.
	shift := int64(0)
	if min < 0 {
		shift = -min
	}
	heap.Init(h)

	x.markers = x.w.Track(0, "markers", TrackOptions{Rank: -1})
	for _, s := range srcs {
		if ms, ok := s.(*markerSource); ok {
			ms.track = x.markers
			continue
		}
		x.tops = append(x.tops, topTrack(x, s.stats()))
	}
	for i, s := range srcs {
		if t, ok := s.(trackSetter); ok {
			t.setTop(x.tops[i])
		}
	}

	var now uint64
	n := 0
	lastProgress := time.Now()
	for h.Len() > 0 {
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if err := x.w.Err(); err != nil {
				return st, err
			}
			if opt.Progress != nil && time.Since(lastProgress) >= 500*time.Millisecond {
				lastProgress = time.Now()
				opt.Progress(x.read, x.total)
			}
		}
		it := &h.items[0]
		s := srcs[it.idx]
		ts := timelineTime(it.t, shift)
		if ts > now {
			now = ts
			for _, o := range srcs {
				o.flush(x, now)
			}
		}
		in := s.stats()
		if in.Events == 0 {
			in.FirstNS = ts
		}
		in.Events++
		in.LastNS = ts
		s.emit(x, ts)
		raw, err := s.next()
		if err == io.EOF {
			heap.Pop(h)
			continue
		}
		if err != nil {
			return st, fmt.Errorf("%s: %w", in.Path, err)
		}
		it.t = raw + offsets[it.idx]
		heap.Fix(h, 0)
	}
	for _, s := range srcs {
		s.flush(x, math.MaxUint64)
		s.finish(x, s.stats().LastNS)
	}
	st.Writer = x.w.Stats()
	if err := x.w.Close(); err != nil {
		return st, err
	}
	st.Writer = x.w.Stats()
	return st, nil
}

func timelineTime(t, shift int64) uint64 {
	t += shift
	if t < 0 {
		return 0
	}
	return uint64(t)
}

type trackSetter interface{ setTop(uint64) }

func topTrack(x *exporter, in *InputStats) uint64 {
	name := map[Kind]string{KindUSB: "USB", KindMMIO: "MMIO", KindEvents: "user_events", KindPT: "Intel PT"}[in.Kind]
	name += " " + baseName(in.Path)
	if in.Stream != "" {
		name += " " + in.Stream
	}
	return x.w.Track(0, name, TrackOptions{
		Description: fmt.Sprintf("%s (%s), clock %s, offset %d ns", in.Path, in.Format, in.Clock, in.OffsetNS),
	})
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// openSource detects the input's format and opens its sources (several
// for a perf.data file with several PT streams).
func openSource(path string, x *exporter) ([]source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var r io.Reader = f
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		x.total += fi.Size()
		r = &countingReader{r: f, n: &x.read}
	}
	br := bufio.NewReaderSize(r, 256<<10)
	head, _ := br.Peek(4096)
	kind, err := Detect(head)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in := &InputStats{Path: path, Kind: kind}
	var s source
	switch kind {
	case KindUSB:
		s, err = newUSBSource(f, br, in)
	case KindMMIO:
		s, err = newMMIOSource(f, br, in, x.opt.DB)
	case KindEvents:
		s, err = newEventsSource(f, br, in)
	case KindPT:
		ss, err := newPTSources(f, br, in, x.opt.clocksOf(path))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if clk, ok := x.opt.clocksOf(path).lookup(path, kind); (!ok || clk.TSC == nil) && !strings.HasPrefix(in.Clock, "perf time") {
			x.warn(in, "no TSC conversion in a clocks file: TSC ticks are shown as nanoseconds")
		}
		return ss, nil
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return []source{s}, nil
}

type mergeItem struct {
	t   int64
	idx int
}

type mergeHeap struct{ items []mergeItem }

func (h *mergeHeap) Len() int { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.t < b.t || a.t == b.t && a.idx < b.idx
}
func (h *mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(v any)    { h.items = append(h.items, v.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	v := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return v
}

// markerSource replays the markers of the clocks file.
type markerSource struct {
	m     []Marker
	i     int
	track uint64
	st    *InputStats
}

func (m *markerSource) next() (int64, error) {
	if m.i >= len(m.m) {
		return 0, io.EOF
	}
	m.i++
	return m.m[m.i-1].NS, nil
}

func (m *markerSource) emit(x *exporter, ts uint64) {
	x.marker(ts, "clocks", []byte(m.m[m.i-1].Name))
}
func (m *markerSource) flush(*exporter, uint64)  {}
func (m *markerSource) finish(*exporter, uint64) {}
func (m *markerSource) close() error             { return nil }
func (m *markerSource) stats() *InputStats       { return m.st }

// clocksOf returns the clocks file of the input at path: its own
// (InputClocks), else Clocks.
func (o *Options) clocksOf(path string) *Clocks {
	if c, ok := o.InputClocks[path]; ok {
		return c
	}
	return o.Clocks
}

// allClocks returns the distinct clocks files the inputs at paths use.
func (o *Options) allClocks(paths []string) []*Clocks {
	var cs []*Clocks
	seen := map[*Clocks]bool{nil: true}
	for _, p := range paths {
		if c := o.clocksOf(p); !seen[c] {
			seen[c] = true
			cs = append(cs, c)
		}
	}
	return cs
}
