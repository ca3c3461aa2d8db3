package timeline

import (
	"bufio"
	"container/heap"
	"context"
	"fmt"
	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/ksym"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"time"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/regdb"
)

// Kind is the source an input comes from, as package detect recognises
// it from the content.
type Kind = detect.Kind

// Source kinds.
const (
	KindUSB    = detect.USB
	KindMMIO   = detect.MMIO
	KindEvents = detect.Events
	KindPT     = detect.PT
)

// ErrUnknownFormat is matched (errors.Is) by the error for an input whose
// content is not a trace Export can read; the error says what the input
// looks like and why (see package detect).
var ErrUnknownFormat = detect.ErrNotTrace

// Options configure Export.
type Options struct {
	// DB names MMIO registers. Without it, the shipped databases are used
	// for the PCI devices they declare.
	DB *regdb.DB
	// Clocks maps every source onto one clock. Without it each source's
	// first event is placed at time 0 (and Stats.Aligned is false).
	Clocks *Clocks
	// InputClocks gives some sources their own clocks file, which
	// replaces Clocks for them: a live capture's sources, or a library
	// user's own, carry the clocks they were captured with. The markers of
	// every clocks file in use are shown. A source whose type is not
	// comparable (a struct value holding a slice, ...) cannot be a key:
	// it uses Clocks.
	InputClocks map[Source]*Clocks
	// FileClocks, when set, gives a file its own clocks file (nil:
	// Clocks), for the sources Open, Export and ExportSplit make of it (by
	// their Info().Path; a PT stream's TSC conversion is taken from it):
	// 'iotap report' applies each capture directory's clocks.json to the
	// files of that directory only. InputClocks wins over it.
	FileClocks func(path string) *Clocks
	// BandwidthWindowNS is the window of the USB bandwidth counters
	// (default 100 ms).
	BandwidthWindowNS int64
	// Progress, when set, is called about twice a second with the input
	// bytes read so far and their total.
	Progress func(read, total int64)
	// Warn, when set, receives warnings (a missing clock, an input without
	// events...) as they happen. They are also in Stats.Warnings.
	Warn func(string)
	// PTCalls, when set, adds to each perf.data input with Intel PT a
	// track per thread of its function calls (intelpt/calls), found with
	// these options (sysroot, build-id directories, demangling).
	PTCalls *calls.Options
	// Stdin is read for the path "-" (standard input: read once, as it
	// comes; no other input may be "-").
	Stdin io.Reader
	// Symbols names the PC of each MMIO access (arg "func",
	// "e1000_reset_hw+0x1c [e1000]"); see mmiotrace.LoadSymbols.
	Symbols *ksym.Table
	// Window, when set, keeps only the events inside [from, to) (iotap
	// timeline --from/--to): relative times count from the timeline's
	// first event, @T is the timeline's own time (ns as Perfetto shows
	// it, written in seconds), mark:NAME a marker of the clocks file or
	// of an input (mmiotrace MARK lines, iotap_marker user events).
	// Merging stops at the first event past the window.
	Window timerange.Spec
	// InputName, when set, gives the name the trace shows for the input
	// read from path (its tracks, the split index): 'iotap report --from'
	// reads each trace's cut in a temporary directory and names the
	// user's file.
	InputName func(path string) string
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
	Slices    int64 `json:"slices,omitempty"`    // USB transfers drawn as slices
	Unmatched int64 `json:"unmatched,omitempty"` // USB submissions without completion
	Orphans   int64 `json:"orphans,omitempty"`   // USB completions without submission
	Named     int64 `json:"named,omitempty"`     // MMIO accesses named by a register database
	Accesses  int64 `json:"accesses,omitempty"`  // MMIO reads and writes
	Markers   int64 `json:"markers,omitempty"`   // markers the input carried
	NotTimed  int64 `json:"not_timed,omitempty"` // records without a time (PT before its first TSC)
	Warnings  int64 `json:"warnings,omitempty"`  // warnings about this input
	Truncated bool  `json:"truncated,omitempty"` // the input ends in the middle of a record
	// Truncation says where, when the reader knows (byte offset, line).
	Truncation string `json:"truncation,omitempty"`
	Overflow   int64  `json:"overflow,omitempty"`    // USB submissions beyond the pending limit, not drawn
	Dropped    int64  `json:"pt_overflow,omitempty"` // PT OVF packets
	// BytesRead counts the bytes read from the input; Seeked is set when a --from/--to window was read
	// through the input's index (INPUT.iotapidx) rather than from the
	// start.
	BytesRead int64  `json:"bytes_read,omitempty"`
	Seeked    bool   `json:"seeked,omitempty"`
	name      string // Options.InputName's, "" for Path
}

// shown is the name the trace shows for the input.
func (in *InputStats) shown() string {
	if in.name != "" {
		return in.name
	}
	return in.Path
}

// Stats is the result of Export.
type Stats struct {
	Inputs []*InputStats `json:"inputs"`
	// Aligned is true when a clocks file gave every input its offset.
	Aligned  bool        `json:"aligned"`
	Markers  int64       `json:"markers"`
	Warnings []string    `json:"warnings,omitempty"`
	Writer   WriterStats `json:"writer"`
	// Interrupted is true when ctx stopped the export: the trace was
	// still closed validly and holds the events read until then (Export
	// and Merge return ctx's error with these Stats).
	Interrupted bool `json:"interrupted,omitempty"`
	// Window is Options.Window resolved on the timeline's clock.
	Window *TimeWindow `json:"window,omitempty"`
}

// TimeWindow is a window on the timeline's clock, ns (an open end is nil).
type TimeWindow struct {
	FromNS *int64 `json:"from_ns,omitempty"`
	ToNS   *int64 `json:"to_ns,omitempty"`
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

// Source is one input of a timeline: events in time order on the source's
// own clock, which the source draws itself. The source packages' readers
// are adapted by NewUSBSource (usbmon), NewMMIOSource (mmiotrace),
// NewEventsSource (user_events NDJSON) and NewPTSource/NewPerfDataSources
// (Intel PT); Open makes them from a file. A live capture, or a library
// user's own data, is merged by implementing Source.
//
// Merge calls Next until io.EOF; after each event it calls Flush with the
// timeline time reached so far (by any source) and Draw with the event's
// timeline time. At the end it calls Flush with math.MaxUint64 and
// Finish with the time of the source's last event.
type Source interface {
	// Info describes the source. Path names it (a file name, or any name
	// for a live or custom source: the clocks file is looked up by its
	// base name, then by Kind). Merge fills in Events, FirstNS, LastNS,
	// OffsetNS and Aligned; the source maintains its own counters (Lost,
	// Skipped, Truncated...).
	Info() *InputStats
	// Next reads the next event and returns its time in nanoseconds on
	// the source's own clock, or io.EOF at the end.
	Next() (int64, error)
	// Draw writes the event Next read last on the canvas, at timeline
	// time ts.
	Draw(c *Canvas, ts uint64)
	// Flush is called when the timeline reaches now (counters over time
	// windows end there).
	Flush(c *Canvas, now uint64)
	// Finish ends what is still open at the end of the input; ts is the
	// time of the source's last event.
	Finish(c *Canvas, ts uint64)
	// Close releases the source's resources.
	Close() error
}

// Canvas is where a Source draws: the Perfetto writer and the source's own
// top-level track, under which it creates its tracks.
type Canvas struct {
	W   *Writer
	Top uint64
	x   *exporter
	in  *InputStats
	opt *Options
	ov  *ovInput // a split timeline's overview of the source
}

// Marker shows a marker (origin: the kind of source it comes from) on
// every input's track and on the markers track.
func (c *Canvas) Marker(ts uint64, origin string, text []byte) { c.x.marker(ts, origin, text) }

// Lost records that n events were lost at ts (the source draws the loss
// itself): a split timeline shows it in the overview and counts it in the
// window.
func (c *Canvas) Lost(ts, n uint64) {
	if c.x.sp != nil {
		c.x.sp.lost(c.ov, ts, n)
	}
}

// Warn records a warning about the source (Stats.Warnings, Options.Warn).
func (c *Canvas) Warn(format string, args ...any) { c.x.warn(c.in, format, args...) }

// BandwidthWindowNS is the window of bandwidth counters (Options).
func (c *Canvas) BandwidthWindowNS() int64 { return c.opt.BandwidthWindowNS }

// openWarner is a source with warnings found when it was opened.
type openWarner interface{ openWarnings() []string }

// exporter is the state shared by the sources while exporting.
type exporter struct {
	w       *Writer
	opt     *Options
	stats   *Stats
	tops    []uint64 // every input's top track, for markers
	markers uint64   // the markers track
	sp      *splitter
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r   io.Reader
	n   *int64 // all inputs (progress); nil: not counted
	own *int64 // this input (InputStats.BytesRead); nil: not counted
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n != nil {
		*c.n += int64(n)
	}
	if c.own != nil {
		*c.own += int64(n)
	}
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
	if x.sp != nil {
		x.sp.ov.marker(ts, origin, text)
	}
	for _, t := range x.tops {
		x.w.Instant(t, ts, "marker", "marker", Bytes("text", text), Str("from", origin))
	}
	x.w.Instant(x.markers, ts, "marker", "marker", Bytes("text", text), Str("from", origin))
}

// Export reads the traces at paths, merges their events on one clock and
// writes them to out as a Perfetto trace. Each input is streamed: memory
// does not grow with the inputs' size. It is Open of every path, then
// Merge. When ctx is cancelled during the merge, the trace is ended
// validly (open slices closed) with the events read so far, and Export
// returns ctx's error with Stats.Interrupted set.
func Export(ctx context.Context, out io.Writer, paths []string, opt Options) (*Stats, error) {
	var prog progress
	var srcs []Source
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	for _, p := range paths {
		ss, err := open(p, &opt, &prog)
		if err != nil {
			st := &Stats{Aligned: opt.anyClocks()}
			for _, s := range srcs {
				st.Inputs = append(st.Inputs, s.Info())
			}
			return st, err
		}
		srcs = append(srcs, ss...)
	}
	return merge(ctx, out, srcs, opt, &prog, nil)
}

// Merge merges the events of srcs on one clock and writes them to out as
// a Perfetto trace. Each source's clock is mapped by opt's clocks files
// (looked up by the base name of its Info().Path, then by its Kind); the
// markers of the clocks files are shown. It does not close the sources.
func Merge(ctx context.Context, out io.Writer, srcs []Source, opt Options) (*Stats, error) {
	return merge(ctx, out, srcs, opt, nil, nil)
}

// progress counts the input bytes read, for Options.Progress.
type progress struct{ read, total int64 }

// merge merges srcs into out; with sp, out is the first file of a split
// timeline, which sp continues in further files.
func merge(ctx context.Context, out io.Writer, srcs []Source, opt Options, prog *progress, sp *splitter) (*Stats, error) {
	if opt.BandwidthWindowNS <= 0 {
		opt.BandwidthWindowNS = 100e6
	}
	if prog == nil {
		prog = &progress{}
	}
	anyClocks := opt.anyClocks()
	st := &Stats{Aligned: anyClocks}
	x := &exporter{w: NewWriter(out), opt: &opt, stats: st, sp: sp}
	if sp != nil {
		x.w.EnableRotation()
	}
	paths := 0
	seen := map[string]bool{}
	for _, s := range srcs {
		in := s.Info()
		if opt.InputName != nil {
			in.name = opt.InputName(in.Path)
		}
		st.Inputs = append(st.Inputs, in)
		if !seen[in.Path] {
			seen[in.Path] = true
			paths++
		}
		if w, ok := s.(openWarner); ok {
			for _, m := range w.openWarnings() {
				x.warn(in, "%s", m)
			}
		}
	}
	srcs = append([]Source(nil), srcs...)
	for _, c := range opt.allClocks(srcs) {
		if len(c.Markers) > 0 {
			srcs = append(srcs, &markerSource{m: c.Markers, st: &InputStats{Path: "clocks", Kind: "markers"}})
		}
	}

	// Read every source's first event to learn its clock's origin.
	h := &mergeHeap{}
	offsets := make([]int64, len(srcs))
	min := int64(math.MaxInt64)
	for i, s := range srcs {
		raw, err := s.Next()
		if err == io.EOF {
			x.warn(s.Info(), "no events")
			continue
		}
		if err != nil {
			return st, mapfile.Named(s.Info().Path, err)
		}
		in := s.Info()
		if clk, ok := opt.clocksOf(s).lookup(in.Path, in.Kind); ok {
			offsets[i] = clk.OffsetNS
			in.Aligned = true
			if clk.Clock != "" {
				in.Clock = clk.Clock
			}
		} else if in.Kind == "markers" {
			offsets[i] = 0
		} else {
			if anyClocks && opt.clocksOf(s) == nil {
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
	if !anyClocks && paths > 1 {
		x.warn(nil, "no clocks file: sources are not aligned, each starts at time 0 (capture with 'iotap capture' to record clocks.json)")
	}
	// Timeline time is the common clock's, shifted when some source
	// would fall before 0.
	shift := int64(0)
	if min < 0 {
		shift = -min
	}
	heap.Init(h)
	var win timerange.Window
	if opt.Window.Set() {
		var err error
		if win, err = resolveWindow(ctx, opt.Window, srcs, offsets, min, shift); err != nil {
			return st, err
		}
		st.Window = &TimeWindow{}
		if win.HasFrom {
			st.Window.FromNS = &win.From
		}
		if win.HasTo {
			st.Window.ToNS = &win.To
		}
		if win.HasFrom {
			// Inputs with an index are read from the window on.
			kept := h.items[:0]
			for _, it := range h.items {
				if timelineTime(it.t, shift) >= uint64(max(win.From, 0)) {
					kept = append(kept, it)
					continue
				}
				ns, raw, err := seekWindow(ctx, x, srcs[it.idx], win, offsets[it.idx], shift)
				if err != nil && err != io.EOF {
					return st, err
				}
				if ns != nil {
					srcs[it.idx] = ns
					defer ns.Close()
					if err == io.EOF {
						continue
					}
					it.t = raw + offsets[it.idx]
				}
				kept = append(kept, it)
			}
			h.items = kept
			heap.Init(h)
		}
	}

	x.markers = x.w.Track(0, "markers", TrackOptions{Rank: -1})
	canvases := make([]*Canvas, len(srcs))
	var ovs []overviewer
	if sp != nil {
		ovs = make([]overviewer, len(srcs))
		sp.begin(srcs)
	}
	for i, s := range srcs {
		c := &Canvas{W: x.w, x: x, in: s.Info(), opt: &opt}
		canvases[i] = c
		if sp != nil {
			c.ov = sp.ov.input(s.Info())
			ovs[i], _ = s.(overviewer)
		}
		if ms, ok := s.(*markerSource); ok {
			c.Top = x.markers
			ms.track = x.markers
			continue
		}
		c.Top = topTrack(x, s.Info())
		x.tops = append(x.tops, c.Top)
	}

	var now uint64
	n := 0
	lastProgress := time.Now()
	var stopped error // ctx's error: the trace ends at the events read so far
	for h.Len() > 0 {
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				stopped = err
				break
			}
			if err := x.w.Err(); err != nil {
				return st, err
			}
			if opt.Progress != nil && time.Since(lastProgress) >= 500*time.Millisecond {
				lastProgress = time.Now()
				opt.Progress(prog.read, prog.total)
			}
		}
		it := &h.items[0]
		s := srcs[it.idx]
		ts := timelineTime(it.t, shift)
		if win.HasTo && int64(ts) >= win.To {
			break
		}
		if win.HasFrom && int64(ts) < win.From {
			// Before the window: read, not drawn.
			if raw, err := s.Next(); err == io.EOF {
				heap.Pop(h)
			} else if err != nil {
				return st, mapfile.Named(s.Info().Path, err)
			} else {
				it.t = raw + offsets[it.idx]
				heap.Fix(h, 0)
			}
			continue
		}
		if ts > now {
			now = ts
			for i, o := range srcs {
				o.Flush(canvases[i], now)
			}
			if sp != nil {
				if err := sp.maybeRotate(x.w, ts); err != nil {
					return st, err
				}
			}
		}
		in := s.Info()
		if in.Events == 0 {
			in.FirstNS = ts
		}
		in.Events++
		in.LastNS = ts
		s.Draw(canvases[it.idx], ts)
		if sp != nil {
			c := canvases[it.idx]
			sp.ov.add(c.ov.events, ts, 1)
			if o := ovs[it.idx]; o != nil {
				o.overview(c.ov, ts)
			}
			sp.cur.Events++
			sp.cur.PerInput[it.idx]++
		}
		raw, err := s.Next()
		if err == io.EOF {
			heap.Pop(h)
			continue
		}
		if err != nil {
			return st, mapfile.Named(in.Path, err)
		}
		it.t = raw + offsets[it.idx]
		heap.Fix(h, 0)
	}
	for i, s := range srcs {
		s.Flush(canvases[i], math.MaxUint64)
		s.Finish(canvases[i], s.Info().LastNS)
	}
	if sp != nil {
		sp.end(now)
	}
	st.Writer = x.w.Stats()
	if err := x.w.Close(); err != nil {
		return st, err
	}
	st.Writer = x.w.Stats()
	st.Interrupted = stopped != nil
	return st, stopped
}

// resolveWindow places opt.Window on the timeline's clock: the start is
// the first event, markers come from the markers sources (clocks files)
// and from the MMIO and events inputs that are files (read through
// package cut, with their index when they have one).
func resolveWindow(ctx context.Context, spec timerange.Spec, srcs []Source, offsets []int64, first, shift int64) (timerange.Window, error) {
	clock := timerange.Clock{Start: first + shift, HasStart: first != math.MaxInt64}
	if len(spec.Marks()) > 0 {
		var ms []cut.Marker
		seen := map[string]bool{}
		for i, s := range srcs {
			in := s.Info()
			if m, ok := s.(*markerSource); ok {
				for _, k := range m.m {
					ms = append(ms, cut.Marker{Time: k.NS + shift, Text: k.Name})
				}
				continue
			}
			if (in.Kind != KindMMIO && in.Kind != KindEvents) || in.Format == "perf.data" || in.Path == "-" || seen[in.Path] {
				continue
			}
			seen[in.Path] = true
			cin, closer, err := cut.OpenFile(in.Path, true, nil)
			if err != nil {
				return timerange.Window{}, fmt.Errorf("%s: markers: %w", in.Path, err)
			}
			fm, err := cut.Markers(ctx, cin)
			closer.Close()
			if err != nil {
				return timerange.Window{}, fmt.Errorf("%s: markers: %w", in.Path, err)
			}
			for _, k := range fm {
				ms = append(ms, cut.Marker{Time: k.Time + offsets[i] + shift, Text: k.Text})
			}
		}
		sort.SliceStable(ms, func(a, b int) bool { return ms[a].Time < ms[b].Time })
		texts := make([]string, len(ms))
		for i, m := range ms {
			texts[i] = m.Text
		}
		clock.Marker = func(name string) (int64, bool) {
			if i := timerange.MatchMarker(texts, name); i >= 0 {
				return ms[i].Time, true
			}
			return 0, false
		}
	}
	return spec.Resolve(clock)
}

func timelineTime(t, shift int64) uint64 {
	t += shift
	if t < 0 {
		return 0
	}
	return uint64(t)
}

func topTrack(x *exporter, in *InputStats) uint64 {
	return x.w.Track(0, topName(in), TrackOptions{
		Description: fmt.Sprintf("%s (%s), clock %s, offset %d ns", in.shown(), in.Format, in.Clock, in.OffsetNS),
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

// Open opens the trace at path as timeline sources (several for a
// perf.data file with several PT streams), its format detected from its
// content (Detect). opt gives the MMIO register database and the clocks
// (a PT stream's TSC conversion). The caller closes the sources.
func Open(path string, opt Options) ([]Source, error) {
	return open(path, &opt, nil)
}

// opener opens the sources of one kind of input, read from br (a
// buffered f). When it returns an error, f is closed by open.
type opener func(f io.Closer, br *bufio.Reader, in *InputStats, opt *Options) ([]Source, error)

// openers are the file formats Open reads, by the kind Detect returns.
var openers = map[Kind]opener{
	KindUSB:    openUSB,
	KindMMIO:   openMMIO,
	KindEvents: openEvents,
	KindPT:     openPT,
}

func open(path string, opt *Options, prog *progress) ([]Source, error) {
	in := &InputStats{Path: path}
	var f io.ReadCloser
	var r io.Reader
	if path == "-" {
		if opt.Stdin == nil {
			return nil, fmt.Errorf("-: no standard input")
		}
		f = io.NopCloser(opt.Stdin)
		c := &countingReader{r: opt.Stdin, own: &in.BytesRead}
		if prog != nil {
			c.n = &prog.read
		}
		r = c
	} else {
		of, err := os.Open(path)
		if err != nil {
			return nil, detect.ReadError(path, err) // with a remedy
		}
		f, r = of, of
		if fi, err := of.Stat(); err == nil && fi.Mode().IsRegular() {
			if prog != nil {
				prog.total += fi.Size()
				r = &countingReader{r: of, n: &prog.read, own: &in.BytesRead}
			} else {
				r = &countingReader{r: of, own: &in.BytesRead}
			}
		}
	}
	br := bufio.NewReaderSize(r, 256<<10)
	head, _ := br.Peek(detect.HeadSize)
	res, err := detect.Recognise(head, len(head) < detect.HeadSize) // a perf.data of tracepoints is Events
	kind := res.Kind
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in.Kind = kind
	fopt := opt
	if opt.FileClocks != nil {
		if clk := opt.FileClocks(path); clk != nil {
			o := *opt
			o.Clocks = clk // the file's own, for a PT stream's TSC conversion
			fopt = &o
		}
	}
	ss, err := openers[kind](f, br, in, fopt)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ss, nil
}

func closeIf(c io.Closer) error {
	if c == nil {
		return nil
	}
	return c.Close()
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

func (m *markerSource) Next() (int64, error) {
	if m.i >= len(m.m) {
		return 0, io.EOF
	}
	m.i++
	return m.m[m.i-1].NS, nil
}

func (m *markerSource) Draw(c *Canvas, ts uint64) {
	c.Marker(ts, "clocks", []byte(m.m[m.i-1].Name))
}
func (m *markerSource) Flush(*Canvas, uint64)  {}
func (m *markerSource) Finish(*Canvas, uint64) {}
func (m *markerSource) Close() error           { return nil }
func (m *markerSource) Info() *InputStats      { return m.st }

// clocksOf returns the clocks file of source s: its own (InputClocks),
// else its file's (FileClocks, by Info().Path), else Clocks.
func (o *Options) clocksOf(s Source) *Clocks {
	if len(o.InputClocks) > 0 && reflect.TypeOf(s).Comparable() {
		if c, ok := o.InputClocks[s]; ok {
			return c
		}
	}
	if o.FileClocks != nil {
		if c := o.FileClocks(s.Info().Path); c != nil {
			return c
		}
	}
	return o.Clocks
}

// anyClocks reports whether some source may have a clocks file.
func (o *Options) anyClocks() bool {
	return o.Clocks != nil || len(o.InputClocks) > 0 || o.FileClocks != nil
}

// allClocks returns the distinct clocks files srcs use.
func (o *Options) allClocks(srcs []Source) []*Clocks {
	var cs []*Clocks
	seen := map[*Clocks]bool{nil: true}
	for _, s := range srcs {
		if c := o.clocksOf(s); !seen[c] {
			seen[c] = true
			cs = append(cs, c)
		}
	}
	return cs
}
