package usbmon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/rotate"
)

// RecordOptions configure a [Recording]: which events of a live capture
// are written, and how.
type RecordOptions struct {
	// Keep, if set, selects the events written. It sees every event the
	// capture delivers, in order (a filter that learns identities from
	// enumeration needs them all).
	Keep func(*Event) bool
	// Snaplen, if > 0, keeps at most this many data bytes per event; the
	// header keeps the kernel's lengths, so readers see a cut record.
	Snaplen int
	// Count, if > 0, stops the capture once this many events are written.
	Count uint64
	// StatsInterval, if > 0, is how often the kernel's drop counter is
	// written to a pcapng output as interface statistics (ifdrop); they
	// are written at the end in any case.
	StatsInterval time.Duration
	// Interval, if > 0, calls OnInterval every Interval with the events
	// written in it (like perf stat -I), and once at the end with the
	// last, partial interval; the intervals add up to RecordStats.Events.
	// OnInterval runs on a goroutine of its own, never concurrently.
	Interval   time.Duration
	OnInterval func(IntervalStats)
	// Progress, if set, is called about once a second (checked every 256
	// events written) with the events written and the kernel's drops.
	Progress func(events, dropped uint64)
}

// RecordStats are the counters of a finished [Recording].
type RecordStats struct {
	Events  uint64        // events written
	Cut     uint64        // events cut to RecordOptions.Snaplen
	Elapsed time.Duration // time spent in Run
	Capture CaptureStats  // the capture's counters after it closed
	Loss    Loss          // what the output format could not hold
	Method  Method        // the capture's method
	Queue   int           // the capture's CaptureOptions.Queue
}

// Recording writes a live capture to a [Writer]: `iotap usb capture`.
// The output is flushed after every batch of events the kernel hands out,
// so a recording killed even with SIGKILL leaves a file that reads back up
// to its last complete record. Pcap and pcapng outputs get the kernel's
// records without re-encoding when the host allows it ([Capture.Record]).
type Recording struct {
	capt   captureSource
	copt   CaptureOptions
	opt    RecordOptions
	stop   context.CancelFunc
	w      Writer
	ng     statsWriter // the pcapng output (or a ring of files), for ifdrop
	last   time.Time   // last statistics block
	err    error       // first write error
	closed bool
}

// statsWriter writes interface statistics: *PcapngWriter, *Rotator.
type statsWriter interface {
	WriteStats(t time.Time, dropped uint64) error
}

// captureSource is what a Recording needs of a Capture (tests fake it).
type captureSource interface {
	ReadInto(*Event) error
	Record() []byte
	Stats() CaptureStats
	Close() error
}

// OpenRecording opens a live capture for a recording. The capture runs
// until ctx is cancelled, RecordOptions.Count events are written, or Close.
// copt.OnBatch, if set, is called after the recording's own flush.
func OpenRecording(ctx context.Context, copt CaptureOptions, opt RecordOptions) (*Recording, error) {
	ctx, stop := context.WithCancel(ctx)
	r := &Recording{copt: copt, opt: opt, stop: stop, last: time.Now()}
	user := copt.OnBatch
	copt.OnBatch = func() {
		r.flush()
		if user != nil {
			user()
		}
	}
	c, err := OpenCapture(ctx, copt)
	if err != nil {
		stop()
		return nil, err
	}
	r.capt = c
	return r, nil
}

// Capture returns the live capture (its Path, its Stats so far).
func (r *Recording) Capture() *Capture {
	c, _ := r.capt.(*Capture)
	return c
}

// flush writes statistics when due and flushes the output, after each
// batch of events.
func (r *Recording) flush() {
	if r.w == nil || r.err != nil {
		return
	}
	if r.ng != nil && r.opt.StatsInterval > 0 && time.Since(r.last) >= r.opt.StatsInterval {
		r.last = time.Now()
		r.err = r.ng.WriteStats(r.last, r.capt.Stats().Dropped)
	}
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
}

// Run writes the capture's events to w until the capture ends, closes the
// capture, writes the final statistics (pcapng) and flushes w. Events
// written to w before Run (descriptors of the devices present, say) stay
// first. readErr is the capture's error, writeErr the first error of w;
// the kernel's drops are in st.Capture.Dropped, never hidden.
func (r *Recording) Run(w Writer) (st RecordStats, readErr, writeErr error) {
	r.w = w
	r.ng, _ = w.(statsWriter)
	start, lastProgress := time.Now(), time.Now()
	var iv *rotate.Interval
	if r.opt.Interval > 0 && r.opt.OnInterval != nil {
		iv = rotate.StartInterval(r.opt.Interval, r.opt.OnInterval)
	}
	var ev Event
	for {
		err := r.capt.ReadInto(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		if r.opt.Keep != nil && !r.opt.Keep(&ev) {
			continue
		}
		if r.opt.Snaplen > 0 && len(ev.Data) > r.opt.Snaplen {
			st.Cut++
		}
		if err := writeCaptured(w, r.capt.Record(), &ev, r.opt.Snaplen); err != nil {
			r.err = err
			break
		}
		st.Events++
		iv.Add(1, uint64(len(ev.Data)))
		if r.opt.Progress != nil && st.Events&255 == 0 && time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			r.opt.Progress(st.Events, r.capt.Stats().Dropped)
		}
		if r.opt.Count > 0 && st.Events >= r.opt.Count {
			r.stop() // drain nothing more: the count is reached
			break
		}
		if r.err != nil {
			break
		}
	}
	r.Close()
	iv.Stop()
	st.Capture = r.capt.Stats()
	if r.ng != nil && r.err == nil {
		r.err = r.ng.WriteStats(time.Now(), st.Capture.Dropped)
	}
	if err := w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	st.Elapsed = time.Since(start)
	st.Loss = w.Loss()
	st.Method, st.Queue = r.copt.Method, r.copt.Queue
	return st, readErr, r.err
}

// Close stops the capture; Run then returns. It is safe to call twice.
func (r *Recording) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.stop()
	return r.capt.Close()
}

// writeCaptured writes ev, straight from the kernel's record rec (nil if
// none) when the writer takes records (pcap, pcapng with the same 64-byte
// header: no re-encoding, one copy less under load). With snaplen > 0
// only the first snaplen data bytes are written.
func writeCaptured(w Writer, rec []byte, ev *Event, snaplen int) error {
	type recordWriter interface {
		WriteRecord(ev *Event, rec []byte) error
	}
	drop := 0
	if snaplen > 0 && len(ev.Data) > snaplen {
		drop = len(ev.Data) - snaplen
		ev.Data = ev.Data[:snaplen]
	}
	if rw, ok := w.(recordWriter); ok && rec != nil {
		return rw.WriteRecord(ev, rec[:len(rec)-drop])
	}
	return w.Write(ev)
}

// String summarizes the recording as `iotap usb capture` reports it: the
// events, the time, the kernel's drops and, for MethodMmap, how close the
// ring came to overflowing.
func (st RecordStats) String() string {
	c := st.Capture
	s := fmt.Sprintf("%d events in %v; kernel dropped %d", st.Events, st.Elapsed.Round(time.Millisecond), c.Dropped)
	if st.Method != MethodMmap {
		return s
	}
	s += fmt.Sprintf("; %d batches, %d filler records skipped, %d events flushed from the ring", c.Batches, c.Fillers, c.Flushed)
	s += fmt.Sprintf("; ring peak %dK of %dK (%d events in one fetch), ring undrained for at most %v, events waited in the ring up to %v",
		(c.RingPeak+1023)/1024, c.RingSize/1024, c.BatchPeak, c.MaxStall.Round(10*time.Microsecond), c.MaxWait.Round(10*time.Microsecond))
	if st.Queue > 0 {
		s += fmt.Sprintf(", queue peak %dK of %dK, draining thread at nice %d", (c.QueuePeak+1023)/1024, st.Queue/1024, c.Nice)
	}
	return s
}

// LockThreadNice locks the calling goroutine to its thread and sets the
// thread's nice value (Linux: per thread); restore puts the old value back
// and unlocks it. Run a Recording with a CaptureOptions.Queue at the
// draining thread's priority: the two threads share the queue, and a
// writer starved by the traffic it records holds the draining thread up.
func LockThreadNice(nice int) (restore func(), err error) {
	runtime.LockOSThread()
	old, err := unix.ThreadNice()
	if err == nil {
		err = unix.SetThreadNice(nice)
	}
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		if unix.SetThreadNice(old) == nil {
			runtime.UnlockOSThread()
		} // else the thread keeps its priority and dies with the goroutine
	}, nil
}
