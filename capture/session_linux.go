//go:build linux

package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/outfile"
	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/timeline"
	"github.com/iotap/iotap/tracefs"
	"github.com/iotap/iotap/usbmon"
	"github.com/iotap/iotap/userevents"
)

// clockPair reads CLOCK_MONOTONIC around another clock and returns the
// midpoint and the other clock, from the tightest of a few tries.
func clockPair(other int32) (mono, val int64, err error) {
	best := int64(-1)
	for i := 0; i < 5; i++ {
		m1, err := iunix.ClockNS(iunix.ClockMonotonic)
		if err != nil {
			return 0, 0, err
		}
		v, err := iunix.ClockNS(other)
		if err != nil {
			return 0, 0, err
		}
		m2, err := iunix.ClockNS(iunix.ClockMonotonic)
		if err != nil {
			return 0, 0, err
		}
		if best < 0 || m2-m1 < best {
			best, mono, val = m2-m1, m1+(m2-m1)/2, v
		}
	}
	return mono, val, nil
}

func monoNow() int64 {
	m, _ := iunix.ClockNS(iunix.ClockMonotonic)
	return m
}

// captureFile creates DIR/name, 0600, never through a link.
func captureFile(dir, name string) (*os.File, error) {
	f, err := outfile.Create(filepath.Join(dir, name), outfile.Options{Mode: outfile.Exclusive})
	if err != nil {
		return nil, err
	}
	return f.OS(), nil
}

// stamp is a marker written at a CLOCK_MONOTONIC time known within
// [m1, m2].
type stamp struct{ m1, m2 int64 }

func (s stamp) mid() int64 { return s.m1 + (s.m2-s.m1)/2 }

// Run captures the sources opt asks for into opt.Dir until opt.Command
// exits, the MMIO device is bound (Bind without Command), opt.Duration
// passes or ctx is done. It writes the capture directory and returns
// what was captured; Result.Loss lists the sources that lost events.
// The error is nil when every source ran, even with loss.
func Run(ctx context.Context, opt Options) (*Result, error) {
	o := &opt
	command := o.Command
	logf := o.logf
	res := &Result{Dir: o.Dir}
	if o.Dir == "" {
		return nil, errors.New("capture: no directory")
	}
	if !o.USB && !o.MMIO && len(o.Events) == 0 {
		return nil, errors.New("capture: no source")
	}
	bind := o.Bind
	if bind != nil && !o.MMIO {
		return nil, errors.New("capture: Bind needs MMIO")
	}
	targets := o.Events
	if err := os.Mkdir(o.Dir, 0o700); err != nil {
		ents, rerr := os.ReadDir(o.Dir)
		if !errors.Is(err, os.ErrExist) || rerr != nil || len(ents) > 0 {
			return nil, fmt.Errorf("capture: %s: must be a new or empty directory", o.Dir)
		}
	} else {
		defer os.Remove(o.Dir) // only succeeds when the capture wrote nothing
	}

	var fs *tracefs.FS
	if o.MMIO || len(targets) > 0 {
		var err error
		if fs, err = tracefs.Find(); err != nil {
			return nil, fmt.Errorf("capture: %w (try 'iotap doctor')", err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Duration > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, o.Duration)
		defer c2()
	}
	// stopCtx stops the streaming sources; ctx (the user's) also stops the
	// command and the MMIO capture.
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()

	clocks := &timeline.Clocks{Version: Version, Common: "CLOCK_MONOTONIC", Sources: map[string]timeline.SourceClock{}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		cancel()
	}
	var loss []string
	var lost []SourceLoss
	addLoss := func(source string, n uint64, format string, args ...any) {
		mu.Lock()
		text := fmt.Sprintf(format, args...)
		loss = append(loss, text)
		lost = append(lost, SourceLoss{Source: source, Lost: n, Text: text})
		mu.Unlock()
	}

	// USB
	if o.USB {
		var w *usbmon.PcapngWriter
		var bw *bufio.Writer
		capt, err := usbmon.OpenCapture(stopCtx, usbmon.CaptureOptions{Bus: o.Bus, OnBatch: func() {
			if w != nil {
				w.Flush()
				bw.Flush()
			}
		}})
		if err != nil {
			if errors.Is(err, usbmon.ErrNotSupported) {
				return nil, fmt.Errorf("capture: %w (try 'iotap doctor')", err)
			}
			return nil, fmt.Errorf("capture: %w", err)
		}
		f, err := captureFile(o.Dir, USBFile)
		if err != nil {
			capt.Close()
			return nil, err
		}
		iw, finishFile := indexWhileRecording(f, filepath.Join(o.Dir, USBFile), cut.FormatPcapng, logf)
		bw = bufio.NewWriterSize(iw, 256<<10)
		w, err = usbmon.NewPcapngWriter(bw, usbmon.LinkTypeUSBLinuxMmapped)
		if err != nil {
			capt.Close()
			f.Close()
			return nil, err
		}
		mono, real, err := clockPair(iunix.ClockRealtime)
		if err != nil {
			capt.Close()
			f.Close()
			return nil, err
		}
		clocks.Sources["usb"] = timeline.SourceClock{Clock: "CLOCK_REALTIME (usbmon binary)", OffsetNS: mono - real}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer finishFile()
			defer capt.Close()
			var ev usbmon.Event
			for {
				err := capt.ReadInto(&ev)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					fail(fmt.Errorf("usb: %w", err))
					break
				}
				if err := w.Write(&ev); err != nil {
					fail(fmt.Errorf("usb: %w", err))
					break
				}
			}
			if err := w.Flush(); err != nil {
				fail(err)
			}
			if err := bw.Flush(); err != nil {
				fail(err)
			}
			st := capt.Stats()
			if st.Dropped > 0 {
				addLoss("usb", st.Dropped, "usb: %d events dropped by the kernel", st.Dropped)
			}
			logf("usb: %d events", st.Events)
		}()
	}

	// user_events
	var startStamp stamp
	var writeEnd func()
	if len(targets) > 0 {
		p, err := userevents.OpenFS(fs)
		if err != nil {
			stop()
			wg.Wait()
			return nil, fmt.Errorf("capture: %w", explainEvents(err))
		}
		defer p.Close()
		ms, err := userevents.ParseCommand(markerCommand)
		if err != nil {
			return nil, err
		}
		marker, err := p.RegisterSchema(ms, 0)
		if err != nil {
			stop()
			wg.Wait()
			return nil, fmt.Errorf("capture: %w", explainEvents(err))
		}
		for _, t := range targets {
			if t.Schema != nil {
				if _, err := p.RegisterSchema(t.Schema, 0); err != nil {
					stop()
					wg.Wait()
					return nil, fmt.Errorf("capture: %s: %w", t.Name, explainEvents(err))
				}
			}
		}
		r, err := userevents.NewRecorder(fs, o.BufferKB)
		if err != nil {
			stop()
			wg.Wait()
			return nil, fmt.Errorf("capture: %w", explainEvents(err))
		}
		for _, n := range r.RemovedStale() {
			logf("removed tracefs instance %s, left by a recorder that was killed", n)
		}
		defer r.Close()
		for _, name := range append([]string{timeline.MarkerEvent}, func() []string {
			var n []string
			for _, t := range targets {
				n = append(n, t.Name)
			}
			return n
		}()...) {
			if _, err := r.Add(userevents.System, name); err != nil {
				stop()
				wg.Wait()
				if errors.Is(err, userevents.ErrNotFound) {
					return nil, &EventNotFoundError{Name: name, Err: err}
				}
				return nil, fmt.Errorf("capture: %w", explainEvents(err))
			}
		}
		f, err := captureFile(o.Dir, EventsFile)
		if err != nil {
			stop()
			wg.Wait()
			return nil, err
		}
		if err := r.Start(); err != nil {
			f.Close()
			stop()
			wg.Wait()
			return nil, fmt.Errorf("capture: %w", explainEvents(err))
		}
		var markTS int64 = -1
		wg.Add(1)
		iw, finishFile := indexWhileRecording(f, filepath.Join(o.Dir, EventsFile), cut.FormatEvents, logf)
		go func() {
			defer wg.Done()
			defer finishFile()
			bw := bufio.NewWriterSize(iw, 64<<10)
			line := userevents.AppendNDJSONInput(nil, "", userevents.FormatTracefs, userevents.ClockTrace)
			bw.Write(line)
			err := r.Run(stopCtx, func(rec *userevents.Recorded) error {
				if rec.Name == timeline.MarkerEvent && markTS < 0 && len(rec.Values) == 2 && string(rec.Values[1].Bytes) == StartMarker {
					markTS = int64(rec.TS)
				}
				line = userevents.AppendNDJSON(line[:0], rec)
				_, err := bw.Write(line)
				return err
			})
			if ferr := bw.Flush(); ferr != nil && err == nil {
				err = ferr
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				fail(fmt.Errorf("events: %w", err))
			}
			st := r.Stats()
			if st.Lost() > 0 || st.Bad > 0 {
				addLoss("events", st.Lost()+st.Bad, "events: %d lost, %d undecodable", st.Lost(), st.Bad)
			}
			mu.Lock()
			if markTS >= 0 {
				clocks.Sources["events"] = timeline.SourceClock{Clock: "trace clock of the user_events instance", OffsetNS: startStamp.mid() - markTS}
			}
			mu.Unlock()
			logf("events: %d events", st.Events)
		}()
		m1 := monoNow()
		err = marker.Write(uint64(m1), StartMarker)
		mu.Lock()
		startStamp = stamp{m1, monoNow()}
		mu.Unlock()
		if err != nil {
			fail(fmt.Errorf("events: marker: %w", err))
		}
		writeEnd = func() { _ = marker.Write(uint64(monoNow()), EndMarker) }
	}
	clocks.Markers = append(clocks.Markers, timeline.Marker{Name: StartMarker, NS: monoNow()})

	// MMIO, with the command; else the command alone.
	var mmioStamp stamp
	var mmioStamped bool
	done := make(chan struct{})
	switch {
	case o.MMIO:
		f, err := captureFile(o.Dir, MMIOFile)
		if err != nil {
			stop()
			wg.Wait()
			return nil, err
		}
		// The clock marker: once mmiotrace traces, a trace_marker write
		// lands in its log as a MARK stamped with the trace clock.
		markCtx, markStop := context.WithCancel(ctx)
		markDone := make(chan struct{})
		go func() {
			defer close(markDone)
			for markCtx.Err() == nil {
				cur, _ := fs.CurrentTracer()
				on, _ := fs.TracingOn()
				if cur == "mmiotrace" && on {
					m1 := monoNow()
					if err := fs.WriteMarker(fmt.Sprintf("%s mono=%d", StartMarker, m1)); err == nil {
						mmioStamp, mmioStamped = stamp{m1, monoNow()}, true
					}
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		iw, finishFile := indexWhileRecording(f, filepath.Join(o.Dir, MMIOFile), cut.FormatMMIO, logf)
		go func() {
			defer close(done)
			defer finishFile()
			bw := bufio.NewWriterSize(iw, 256<<10)
			mres, err := mmiotrace.Capture(ctx, bw, mmiotrace.CaptureOptions{
				FS: fs, Bind: bind, Command: command,
				CommandStdout: o.Stdout, CommandStderr: o.Stderr,
				Logf: func(format string, args ...any) { logf("mmio: "+format, args...) },
			})
			if ferr := bw.Flush(); ferr != nil && err == nil {
				err = ferr
			}
			markStop()
			<-markDone
			if err != nil {
				fail(fmt.Errorf("mmio: %w", err))
				return
			}
			if mres.CommandErr != nil {
				fail(fmt.Errorf("command: %w", mres.CommandErr))
			}
			if mres.Lost() > 0 {
				addLoss("mmio", mres.Lost(), "mmio: %d events lost", mres.Lost())
			}
			logf("mmio: %d lines", mres.Lines)
		}()
	case len(command) > 0:
		go func() {
			defer close(done)
			cmd := exec.CommandContext(ctx, command[0], command[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, o.Stdout, o.Stderr
			if err := cmd.Run(); err != nil && ctx.Err() == nil {
				fail(fmt.Errorf("command: %w", err))
			}
		}()
	default:
		logf("capturing into %s; Ctrl-C stops", o.Dir)
		go func() {
			defer close(done)
			<-ctx.Done()
		}()
	}
	<-done
	clocks.Markers = append(clocks.Markers, timeline.Marker{Name: EndMarker, NS: monoNow()})
	if writeEnd != nil {
		writeEnd() // the recorder drains its buffers when stopped
	}
	stop()
	wg.Wait()

	if o.MMIO && mmioStamped {
		ts, err := findMark(filepath.Join(o.Dir, MMIOFile), fmt.Sprintf("%s mono=%d", StartMarker, mmioStamp.m1))
		if err == nil {
			tc, _ := fs.TraceClock()
			clocks.Sources["mmio"] = timeline.SourceClock{Clock: "trace clock " + tc, OffsetNS: mmioStamp.mid() - ts}
		}
	}
	if o.MMIO {
		if _, ok := clocks.Sources["mmio"]; !ok {
			logf("warning: mmio: the clock marker is not in the log: the MMIO trace is not aligned")
		}
	}
	if len(targets) > 0 {
		if _, ok := clocks.Sources["events"]; !ok {
			logf("warning: events: the clock marker was not recorded: user events are not aligned")
		}
	}
	if len(targets) > 0 {
		clocks.Markers = nil // the iotap_marker events show them already
	}
	cf, err := captureFile(o.Dir, ClocksFile)
	if err != nil {
		return nil, err
	}
	werr := timeline.WriteClocks(cf, clocks)
	if cerr := cf.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	res.Clocks = clocks
	res.Loss, res.Lost = loss, lost
	if len(lost) > 0 {
		// Kept with the traces: export puts it in the captures table.
		if err := WriteLoss(o.Dir, lost); err != nil {
			return res, fmt.Errorf("capture: %w", err)
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("capture: %w", errors.Join(errs...))
	}
	return res, nil
}

// findMark returns the time of the first MARK record of an mmiotrace log
// whose text is text.
func findMark(path, text string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rd := mmiotrace.NewReader(f)
	defer rd.Close()
	rd.SetKeepGoing(true)
	var rec mmiotrace.Record
	for {
		if err := rd.ReadInto(&rec); err != nil {
			return 0, err
		}
		if rec.Kind == mmiotrace.KindMark && string(rec.Text) == text {
			return int64(rec.Time.NS), nil
		}
	}
}

// explainEvents adds the remedy to a user_events error.
func explainEvents(err error) error {
	switch {
	case errors.Is(err, userevents.ErrNotSupported):
		if ue := (*userevents.Error)(nil); errors.As(err, &ue) && ue.Hint != "" {
			return fmt.Errorf("%w (try 'iotap doctor')", err) // the hint names what is missing
		}
		return fmt.Errorf("%w (is this kernel built with CONFIG_USER_EVENTS? try 'iotap doctor')", err)
	case errors.Is(err, userevents.ErrPermission):
		return fmt.Errorf("%w (run as root)", err)
	}
	return err
}
