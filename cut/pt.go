package cut

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/timerange"
)

// PTTiming says how the times of a raw Intel PT stream are computed: the
// decoder's timing parameters (MTC frequency, CPUID 0x15, nominal ratio,
// for MTC and CYC) and the conversion of TSC to nanoseconds (nil: TSC
// ticks are taken as nanoseconds). OpenFile fills it from the capture.json
// of an 'iotap pt capture' directory.
type PTTiming struct {
	Config intelpt.Config
	ToNS   func(tsc uint64) uint64
}

// EmptyPT is what a cut of a raw PT stream holds when no packet falls in
// the window: a PSB and a PSBEND.
var EmptyPT = []byte{0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x23}

func (t *PTTiming) ns(tsc uint64) int64 {
	if t == nil || t.ToNS == nil {
		return int64(tsc)
	}
	return int64(t.ToNS(tsc))
}

func (t *PTTiming) config() intelpt.Config {
	if t == nil {
		return intelpt.Config{}
	}
	return t.Config
}

// A raw PT stream can only be decoded from a PSB: a cut of it is a run of
// whole PSB segments (a PSB, its PSB+ header and the packets up to the
// next PSB). Each packet has the time the decoder's TimeTracker gives it
// (TSC, refined with MTC/CYC); the packets of a PSB+ header take the time
// of the TSC in it. The cut starts at the last PSB before which every
// packet is earlier than from, and ends at the first PSB after it whose
// header's time is at or after to: it holds every packet of the window
// (and the rest of the segments at its ends), decodable on its own.

// ptSpan is what a scan of a PT stream found.
type ptSpan struct {
	start, end    int64 // the cut: [start, end)
	packets, kept int64
	ovf           uint64 // OVF packets in the cut
	first         int64  // time of the first timed packet
	hasFirst      bool
	skipped       int64 // decode errors (resynchronised at the next PSB)
	truncated     bool  // the stream ends inside a packet
}

// scanPT reads the PT stream r (from its start) and finds the cut of win.
// With stopAtStart it returns at the first timed packet (span.first).
func scanPT(ctx context.Context, r io.Reader, t *PTTiming, win timerange.Window, stopAtStart bool) (ptSpan, error) {
	var sp ptSpan
	dec := intelpt.NewStreamDecoder(r, t.config(), 0)
	tt := intelpt.NewTimeTracker(t.config())
	sp.end = -1
	inHeader := false          // between a PSB and its PSBEND
	headerTimed := false       // the current header's TSC was seen
	prefixMax := int64(NoTime) // latest time of the packets before the current one
	candidate := int64(0)      // start of the cut so far
	if win.HasFrom {
		candidate = -1 // a PSB is needed to start
	}
	// counts since the candidate start
	var kept, keptAtPSB int64
	var ovf, ovfAtPSB uint64
	var p intelpt.Packet
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return sp, ctx.Err()
		}
		off := dec.Offset()
		err := dec.Next(&p)
		if err == io.EOF {
			break
		}
		if errors.Is(err, intelpt.ErrTruncated) {
			sp.truncated = true
			break
		}
		if err != nil {
			var de *intelpt.DecodeError
			if !errors.As(err, &de) {
				return sp, err
			}
			sp.skipped++
			tt.Reset()
			if serr := dec.SyncForward(); serr != nil {
				break // no PSB after it: the rest is undecodable
			}
			continue
		}
		sp.packets++
		if p.Kind == intelpt.KindPSB {
			inHeader, headerTimed = true, false
			keptAtPSB, ovfAtPSB = kept, ovf
			if win.HasFrom && (prefixMax == NoTime || prefixMax < win.From) {
				candidate, kept, ovf = off, 0, 0
			}
		}
		if p.Kind == intelpt.KindPSBEnd {
			inHeader = false
		}
		tt.Update(&p)
		tsc, timed := tt.TSC()
		if inHeader && !headerTimed {
			if p.Kind == intelpt.KindTSC {
				headerTimed = true
			} else {
				timed = false // a PSB+ packet before its TSC: the header's time
			}
		}
		var ts int64
		if timed {
			ts = t.ns(tsc)
			if !sp.hasFirst {
				sp.first, sp.hasFirst = ts, true
				if stopAtStart {
					return sp, nil
				}
			}
			if p.Kind == intelpt.KindTSC && inHeader && win.HasTo && ts >= win.To && candidate >= 0 && dec.SyncOffset() >= candidate {
				// the first PSB+ at or after the window's end: the cut ends
				// at its PSB, whose packets are not counted in
				sp.end = dec.SyncOffset()
				kept, ovf = keptAtPSB, ovfAtPSB
				break
			}
		}
		if candidate < 0 {
			if timed {
				prefixMax = max(prefixMax, ts)
			}
			continue
		}
		kept++
		if p.Kind == intelpt.KindOVF {
			ovf++
		}
		if timed {
			prefixMax = max(prefixMax, ts)
		}
	}
	if err := dec.Err(); err != nil {
		return sp, err
	}
	if candidate < 0 || sp.end < 0 && win.HasFrom && (prefixMax == NoTime || prefixMax < win.From) {
		// no PSB (nothing decodable), or every packet is before the window
		candidate, kept, ovf = 0, 0, 0
		sp.end = 0
	}
	if sp.end >= 0 && sp.end < candidate {
		sp.end = candidate
	}
	sp.start, sp.kept, sp.ovf = candidate, kept, ovf
	if sp.end >= 0 && sp.end == sp.start {
		sp.kept, sp.ovf = 0, 0
	}
	return sp, nil
}

// errPTNoMarkers is the window error of mark:NAME on Intel PT.
var errPTNoMarkers = errors.New("an Intel PT trace has no markers (mark:NAME)")

// cutPT cuts a raw PT stream: see scanPT. The PSB segments of the window
// are copied byte for byte.
func (c *cutter) cutPT(ctx context.Context, spec timerange.Spec, w io.Writer) error {
	if len(spec.Marks()) > 0 {
		return &WindowError{Input: c.in.Name, Err: errPTNoMarkers}
	}
	if c.in.Index != nil {
		c.warn(fmt.Sprintf("%s: index ignored: Intel PT traces are not indexed", c.in.Name))
	}
	t := c.in.PT
	clock := timerange.Clock{}
	if spec.Set() {
		r, closeFn, err := c.open(0, -1)
		if err != nil {
			return err
		}
		sp, err := scanPT(ctx, r, t, timerange.Window{}, true)
		closeFn()
		if err != nil {
			return err
		}
		if !sp.hasFirst {
			// No packet has a time: every window would be empty (its
			// packets, an overflow too, silently left out).
			return &WindowError{Input: c.in.Name, Err: errors.New("the trace has no time (no TSC packet): a time window cannot be placed in it")}
		}
		clock.Start, clock.HasStart = sp.first, sp.hasFirst
	}
	win, err := spec.Resolve(clock)
	if err != nil {
		return &WindowError{Input: c.in.Name, Err: err}
	}
	c.res.Window = win
	c.res.Start, c.res.HasStart = clock.Start, clock.HasStart
	r, closeFn, err := c.open(0, -1)
	if err != nil {
		return err
	}
	sp, err := scanPT(ctx, r, t, win, false)
	closeFn()
	if err != nil {
		return err
	}
	if sp.truncated && sp.end < 0 {
		c.warn(fmt.Sprintf("%s: the trace ends inside a packet (copied as it is)", c.in.Name))
	}
	if sp.skipped > 0 {
		c.warn(fmt.Sprintf("%s: %d undecodable places in the trace (resynchronised at the next PSB)", c.in.Name, sp.skipped))
	}
	c.res.Records, c.res.Kept, c.res.Events, c.res.Lost = sp.packets, sp.kept, sp.kept, sp.ovf
	c.res.InputStart, c.res.InputEnd = sp.start, sp.end
	if !c.res.HasStart {
		c.res.Start, c.res.HasStart = sp.first, sp.hasFirst
	}
	end := sp.end
	if end < 0 {
		end = -1
	} else if end <= sp.start {
		// an empty window: a stream of a PSB and its PSBEND, which
		// decodes (no packet, time or instruction) and is recognised
		c.res.InputEnd = sp.start
		_, err := w.Write(EmptyPT)
		return err
	}
	src, closeFn, err := c.open(sp.start, end)
	if err != nil {
		return err
	}
	defer closeFn()
	bw := bufio.NewWriterSize(w, 256<<10)
	n, err := io.Copy(bw, src)
	if err != nil {
		return err
	}
	if sp.end < 0 {
		c.res.InputEnd = sp.start + n
	}
	return bw.Flush()
}
