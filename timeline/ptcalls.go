package timeline

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/internal/mapfile"
)

// ptCallEvent is the begin or end of a call.
type ptCallEvent struct {
	begin bool
	tid   int32
	ts    uint64 // TSC
	from  uint64 // of an end: the call's begin (TSC)
	name  string
}

// ptCallsBatch is the events of a batch handed from the decoder to the
// timeline (a variable for the tests); ptCallsBatches bounds the batches
// kept for reuse (the 4 in the channel, the one being read, the one being
// filled).
var ptCallsBatch = 4096

const ptCallsBatches = 6

// ptCallsSource draws the function calls of one PT stream (intelpt/calls)
// as nested slices, one track per thread: magic-trace's picture. The
// decoder runs in a goroutine and hands over events in batches, so memory
// stays flat whatever the trace's length; the batches go back to the
// decoder through free once read, so a long trace allocates no new ones
// (a new batch per 4,096 events was 90 % of timeline --pt-calls'
// allocation and let the heap grow to twice its live size).
type ptCallsSource struct {
	in     *InputStats
	toNS   func(uint64) uint64
	ch     chan []ptCallEvent
	free   chan []ptCallEvent // batches read, for the decoder to refill
	done   chan struct{}
	errc   chan error
	batch  []ptCallEvent
	i      int
	cur    ptCallEvent
	last   uint64
	names  map[int32]string
	tracks map[int32]uint64
	open   map[int32]int
	ov     map[string]*ovSeries // time per function (overview)
}

// NewPTCallsSources adapts the calls of each PT stream of in (a perf.data
// file or capture directory read by intelpt/calls) to a timeline source
// named name: per thread a track of nested slices named after the
// functions. Times are the sideband's clock (TSC converted when in knows
// how, else TSC ticks shown as ns). The sources own in: it is closed
// when the decoding of its last stream has ended.
func NewPTCallsSources(name string, in *calls.Input, o calls.Options) []Source {
	var srcs []Source
	if len(in.Streams) == 0 {
		in.Close()
		return nil
	}
	left := new(atomic.Int32)
	left.Store(int32(len(in.Streams)))
	for i, st := range in.Streams {
		stats := &InputStats{Path: name, Kind: KindPT, Format: "Intel PT function calls", Clock: "TSC ticks (no conversion: shown as ns)"}
		if in.ToNS != nil {
			stats.Clock = "perf time (TSC converted)"
		}
		if st.CPU >= 0 {
			stats.Stream = fmt.Sprintf("calls, cpu %d", st.CPU)
		} else {
			stats.Stream = fmt.Sprintf("calls, tid %d", st.TID)
		}
		s := &ptCallsSource{in: stats, toNS: in.ToNS, ch: make(chan []ptCallEvent, 4), free: make(chan []ptCallEvent, ptCallsBatches), done: make(chan struct{}), errc: make(chan error, 1),
			names: map[int32]string{}, tracks: map[int32]uint64{}, open: map[int32]int{}}
		so := o
		so.Streams = []int{i}
		so.NoTree = true // the track draws the calls, not their tree
		go func() {
			s.run(in, so)
			if left.Add(-1) == 0 {
				in.Close()
			}
		}()
		srcs = append(srcs, s)
	}
	return srcs
}

func (s *ptCallsSource) run(in *calls.Input, o calls.Options) {
	var batch []ptCallEvent
	stopped := false
	send := func() {
		if stopped || len(batch) == 0 {
			return
		}
		select {
		case s.ch <- batch:
			select {
			case batch = <-s.free:
				batch = batch[:0]
			default:
				batch = make([]ptCallEvent, 0, ptCallsBatch)
			}
		case <-s.done:
			stopped = true
		}
	}
	add := func(e ptCallEvent) {
		if stopped {
			return
		}
		batch = append(batch, e)
		if len(batch) == cap(batch) {
			send()
		}
	}
	batch = make([]ptCallEvent, 0, ptCallsBatch)
	o.OnBegin = func(c *calls.Call) { add(ptCallEvent{begin: true, tid: c.Thread, ts: c.Begin, name: c.Func}) }
	o.OnCall = func(c *calls.Call) { add(ptCallEvent{tid: c.Thread, ts: c.End, from: c.Begin, name: c.Func}) }
	// The streams are mapped files: a file cut shorter while it is read
	// is an error naming it, not a crash of this goroutine.
	var res *calls.Result
	err := mapfile.Do(func() error {
		var err error
		res, err = calls.Analyze(in, o)
		return err
	})
	if err == nil {
		s.in.Skipped += int64(res.Gaps)
		if len(res.Cut) > 0 { // the stream ends inside a packet: its calls end before
			s.in.Truncated, s.in.Truncation = true, strings.Join(res.Cut, "; ")
		}
	}
	send()
	close(s.ch)
	s.errc <- err
}

func (s *ptCallsSource) Info() *InputStats { return s.in }

func (s *ptCallsSource) Next() (int64, error) {
	for s.i >= len(s.batch) {
		b, ok := <-s.ch
		if !ok {
			if err := <-s.errc; err != nil {
				s.errc <- err
				return 0, err
			}
			s.errc <- nil
			return 0, io.EOF
		}
		if s.batch != nil {
			select { // the events are copied out (cur): the decoder may refill it
			case s.free <- s.batch:
			default:
			}
		}
		s.batch, s.i = b, 0
	}
	s.cur = s.batch[s.i]
	s.i++
	t := s.cur.ts
	if s.toNS != nil {
		t = s.toNS(t)
	}
	if t < s.last { // times never go back within a stream; keep the slices nested if they do
		t = s.last
	}
	s.last = t
	return int64(t), nil
}

func (s *ptCallsSource) Draw(c *Canvas, ts uint64) {
	e := &s.cur
	tr, ok := s.tracks[e.tid]
	if !ok {
		tr = c.W.Track(c.Top, "thread "+strconv.Itoa(int(e.tid)), TrackOptions{Description: "function calls rebuilt from Intel PT"})
		s.tracks[e.tid] = tr
	}
	if e.begin {
		c.W.Begin(tr, ts, "call", e.name)
		s.open[e.tid]++
		s.in.Slices++
		return
	}
	if s.open[e.tid] > 0 {
		c.W.End(tr, ts)
		s.open[e.tid]--
	}
}

// overview adds the time of each finished call, [begin, end), to its
// function's series (ns spent per bucket: a call's time includes its
// callees', as the calls' begin and end in 'pt calls --json' give it);
// the overview shows the functions with the most time.
func (s *ptCallsSource) overview(oi *ovInput, _ uint64) {
	e := &s.cur
	if e.begin || e.ts < e.from {
		return
	}
	sr, ok := s.ov[e.name]
	if !ok {
		if s.ov == nil {
			s.ov = map[string]*ovSeries{}
		}
		sr = oi.newSeries(ptFuncGroup, e.name+" time", ovTime)
		if len(s.ov) < maxOvSeries {
			s.ov[e.name] = sr
		}
	}
	t0, t1 := e.from, e.ts
	if s.toNS != nil {
		t0, t1 = s.toNS(t0), s.toNS(t1)
	}
	oi.ov.addSpan(sr, t0, t1)
}

func (s *ptCallsSource) Flush(c *Canvas, now uint64) {}

// Finish ends slices still open (the tracker ends every call, so there
// are none unless the decoder failed).
func (s *ptCallsSource) Finish(c *Canvas, ts uint64) {
	for tid, n := range s.open {
		for ; n > 0; n-- {
			c.W.End(s.tracks[tid], ts)
		}
		s.open[tid] = 0
	}
}

func (s *ptCallsSource) Close() error {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	// drain so the decoder goroutine ends
	go func() {
		for range s.ch {
		}
	}()
	return nil
}
