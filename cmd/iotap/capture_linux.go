//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/iotap/iotap/internal/outfile"
	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/timeline"
	"github.com/iotap/iotap/tracefs"
	"github.com/iotap/iotap/usbmon"
	"github.com/iotap/iotap/userevents"
	"github.com/spf13/cobra"
)

type captureOptions struct {
	out       string
	usb       bool
	bus       int
	mmio      bool
	bind      string
	events    []string
	duration  time.Duration
	bufferKB  int
	allowLoss bool
}

// Names of the files 'iotap capture' writes in its directory.
const (
	captureUSBFile    = "usb.pcapng"
	captureMMIOFile   = "mmio.log"
	captureEventsFile = "events.ndjson"
	captureClocksFile = "clocks.json"
	captureStartText  = "iotap capture start"
	captureEndText    = "iotap capture end"
	captureMarkerCmd  = timeline.MarkerEvent + " u64 mono; char[64] text"
)

func newCaptureCmd(e *env) *cobra.Command {
	o := &captureOptions{}
	c := &cobra.Command{
		Use:   "capture [--usb] [--mmio [--bind PCI]] [--events NAME|'NAME FIELDS']... -o DIR [-- COMMAND...]",
		Short: "Capture several sources at once, with what is needed to put them on one clock",
		Long: `capture records USB (usbmon, all buses or --bus), MMIO (mmiotrace; --bind
unbinds the PCI device first and binds it again while tracing) and user_events
(--events, repeatable; 'NAME FIELDS' registers the event) together into DIR:

  usb.pcapng      usbmon events (wall clock)
  mmio.log        the mmiotrace log (ftrace clock)
  events.ndjson   the user events, one JSON object per line (trace clock)
  clocks.json     per source, the offset onto CLOCK_MONOTONIC

The offsets come from markers written to the sources when they all run, with
CLOCK_MONOTONIC read around each: a trace_marker write that lands in the
mmiotrace log, the user event iotap_marker (its 'mono' field), and for usbmon,
whose stamps are the wall clock, CLOCK_REALTIME read against CLOCK_MONOTONIC.
'iotap timeline DIR/*' and 'iotap report DIR -o FILE.pftrace' use clocks.json.

The capture runs COMMAND (after --) and stops when it exits; with --mmio and
--bind but no command, once the device is bound; otherwise until --duration
or Ctrl-C. Files are created 0600. Exit status 3 when a source lost events,
unless --allow-loss.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				command, args = args[at:], args[:at]
			}
			if len(args) > 0 {
				return usageErrorf("capture: unexpected argument %q (put the command after --)", args[0])
			}
			return runCapture(e, o, command)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.out, "output", "o", "", "directory to write (created 0700; must not exist or be empty)")
	f.BoolVar(&o.usb, "usb", false, "capture USB with usbmon")
	f.IntVar(&o.bus, "bus", 0, "USB bus to capture (0: all)")
	f.BoolVar(&o.mmio, "mmio", false, "capture MMIO with mmiotrace")
	f.StringVar(&o.bind, "bind", "", "PCI device (DDDD:BB:DD.F) to unbind before and bind while tracing MMIO")
	f.StringArrayVar(&o.events, "events", nil, "user event to record: NAME, or 'NAME FIELDS' to register it (repeatable)")
	f.DurationVar(&o.duration, "duration", 0, "stop after this long (0: at the end of the command, or on Ctrl-C)")
	f.IntVar(&o.bufferKB, "buffer-kb", 0, "per-CPU ring buffer of the user events instance (0: kernel default)")
	f.BoolVar(&o.allowLoss, "allow-loss", false, "exit 0 even when a source lost events")
	return c
}

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

func runCapture(e *env, o *captureOptions, command []string) error {
	if o.out == "" {
		return usageErrorf("capture: -o DIR is required")
	}
	if !o.usb && !o.mmio && len(o.events) == 0 {
		return usageErrorf("capture: choose at least one source: --usb, --mmio, --events NAME")
	}
	if o.bind != "" && !o.mmio {
		return usageErrorf("capture: --bind needs --mmio")
	}
	if o.bus < 0 || o.bus > 255 {
		return usageErrorf("capture: --bus %d: want 0 (all buses) to 255", o.bus)
	}
	var bind *mmiotrace.PCIAddr
	if o.bind != "" {
		a, err := mmiotrace.ParsePCIAddr(o.bind)
		if err != nil {
			return usageErrorf("capture: --bind: %v", err)
		}
		bind = &a
	}
	type evTarget struct {
		name   string
		schema *userevents.Schema
	}
	var targets []evTarget
	for _, a := range o.events {
		a = strings.TrimSpace(a)
		if strings.ContainsAny(a, " \t") {
			s, err := userevents.ParseCommand(a)
			if err != nil {
				return usageErrorf("capture: --events %q: %v", a, err)
			}
			targets = append(targets, evTarget{s.Name, s})
		} else if !userevents.ValidTracepoint(a) {
			return usageErrorf("capture: --events %q: letters, digits and '_' only", a)
		} else {
			targets = append(targets, evTarget{name: a})
		}
	}
	if err := os.Mkdir(o.out, 0o700); err != nil {
		ents, rerr := os.ReadDir(o.out)
		if !errors.Is(err, os.ErrExist) || rerr != nil || len(ents) > 0 {
			return fmt.Errorf("capture: %s: must be a new or empty directory", o.out)
		}
	} else {
		defer os.Remove(o.out) // only succeeds when the capture wrote nothing
	}

	var fs *tracefs.FS
	if o.mmio || len(targets) > 0 {
		var err error
		if fs, err = tracefs.Find(); err != nil {
			return fmt.Errorf("capture: %w (try 'iotap doctor')", err)
		}
	}

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	if o.duration > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, o.duration)
		defer c2()
	}
	// stopCtx stops the streaming sources; ctx (the user's) also stops the
	// command and the MMIO capture.
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()

	clocks := &timeline.Clocks{Common: "CLOCK_MONOTONIC", Sources: map[string]timeline.SourceClock{}}
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
	addLoss := func(format string, args ...any) {
		mu.Lock()
		loss = append(loss, fmt.Sprintf(format, args...))
		mu.Unlock()
	}

	// USB
	if o.usb {
		var w *usbmon.PcapngWriter
		var bw *bufio.Writer
		capt, err := usbmon.OpenCapture(stopCtx, usbmon.CaptureOptions{Bus: o.bus, OnBatch: func() {
			if w != nil {
				w.Flush()
				bw.Flush()
			}
		}})
		if err != nil {
			if errors.Is(err, usbmon.ErrNotSupported) {
				return fmt.Errorf("capture: %w (try 'iotap doctor')", err)
			}
			return fmt.Errorf("capture: %w", err)
		}
		f, err := captureFile(o.out, captureUSBFile)
		if err != nil {
			capt.Close()
			return err
		}
		bw = bufio.NewWriterSize(f, 256<<10)
		w, err = usbmon.NewPcapngWriter(bw, usbmon.LinkTypeUSBLinuxMmapped)
		if err != nil {
			capt.Close()
			f.Close()
			return err
		}
		mono, real, err := clockPair(iunix.ClockRealtime)
		if err != nil {
			capt.Close()
			f.Close()
			return err
		}
		clocks.Sources["usb"] = timeline.SourceClock{Clock: "CLOCK_REALTIME (usbmon binary)", OffsetNS: mono - real}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
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
				addLoss("usb: %d events dropped by the kernel", st.Dropped)
			}
			fmt.Fprintf(e.stderr, "iotap: usb: %d events\n", st.Events)
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
			return fmt.Errorf("capture: %w", explain(err))
		}
		defer p.Close()
		ms, err := userevents.ParseCommand(captureMarkerCmd)
		if err != nil {
			return err
		}
		marker, err := p.RegisterSchema(ms, 0)
		if err != nil {
			stop()
			wg.Wait()
			return fmt.Errorf("capture: %w", explain(err))
		}
		for _, t := range targets {
			if t.schema != nil {
				if _, err := p.RegisterSchema(t.schema, 0); err != nil {
					stop()
					wg.Wait()
					return fmt.Errorf("capture: %s: %w", t.name, explain(err))
				}
			}
		}
		r, err := userevents.NewRecorder(fs, o.bufferKB)
		if err != nil {
			stop()
			wg.Wait()
			return fmt.Errorf("capture: %w", explain(err))
		}
		reportStale(e, r)
		defer r.Close()
		for _, name := range append([]string{timeline.MarkerEvent}, func() []string {
			var n []string
			for _, t := range targets {
				n = append(n, t.name)
			}
			return n
		}()...) {
			if _, err := r.Add(userevents.System, name); err != nil {
				stop()
				wg.Wait()
				if errors.Is(err, userevents.ErrNotFound) {
					return usageErrorf("capture: --events %s: %v (register it, or give its fields: --events 'NAME FIELDS')", name, err)
				}
				return fmt.Errorf("capture: %w", explain(err))
			}
		}
		f, err := captureFile(o.out, captureEventsFile)
		if err != nil {
			stop()
			wg.Wait()
			return err
		}
		if err := r.Start(); err != nil {
			f.Close()
			stop()
			wg.Wait()
			return fmt.Errorf("capture: %w", explain(err))
		}
		var markTS int64 = -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
			bw := bufio.NewWriterSize(f, 64<<10)
			var line []byte
			err := r.Run(stopCtx, func(rec *userevents.Recorded) error {
				if rec.Name == timeline.MarkerEvent && markTS < 0 && len(rec.Values) == 2 && string(rec.Values[1].Bytes) == captureStartText {
					markTS = int64(rec.TS)
				}
				line = append(userevents.AppendJSON(line[:0], rec), '\n')
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
				addLoss("events: %d lost, %d undecodable", st.Lost(), st.Bad)
			}
			mu.Lock()
			if markTS >= 0 {
				clocks.Sources["events"] = timeline.SourceClock{Clock: "trace clock of the user_events instance", OffsetNS: startStamp.mid() - markTS}
			}
			mu.Unlock()
			fmt.Fprintf(e.stderr, "iotap: events: %d events\n", st.Events)
		}()
		m1 := monoNow()
		err = marker.Write(uint64(m1), captureStartText)
		mu.Lock()
		startStamp = stamp{m1, monoNow()}
		mu.Unlock()
		if err != nil {
			fail(fmt.Errorf("events: marker: %w", err))
		}
		writeEnd = func() { _ = marker.Write(uint64(monoNow()), captureEndText) }
	}
	clocks.Markers = append(clocks.Markers, timeline.Marker{Name: captureStartText, NS: monoNow()})

	// MMIO, with the command; else the command alone.
	var mmioStamp stamp
	var mmioStamped bool
	done := make(chan struct{})
	switch {
	case o.mmio:
		f, err := captureFile(o.out, captureMMIOFile)
		if err != nil {
			stop()
			wg.Wait()
			return err
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
					if err := fs.WriteMarker(fmt.Sprintf("%s mono=%d", captureStartText, m1)); err == nil {
						mmioStamp, mmioStamped = stamp{m1, monoNow()}, true
					}
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		go func() {
			defer close(done)
			defer f.Close()
			bw := bufio.NewWriterSize(f, 256<<10)
			res, err := mmiotrace.Capture(ctx, bw, mmiotrace.CaptureOptions{
				FS: fs, Bind: bind, Command: command,
				CommandStdout: e.stdout, CommandStderr: e.stderr,
				Logf: func(format string, args ...any) { fmt.Fprintf(e.stderr, "iotap: mmio: "+format+"\n", args...) },
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
			if res.CommandErr != nil {
				fail(fmt.Errorf("command: %w", res.CommandErr))
			}
			if res.Lost() > 0 {
				addLoss("mmio: %d events lost", res.Lost())
			}
			fmt.Fprintf(e.stderr, "iotap: mmio: %d lines\n", res.Lines)
		}()
	case len(command) > 0:
		go func() {
			defer close(done)
			cmd := exec.CommandContext(ctx, command[0], command[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, e.stdout, e.stderr
			if err := cmd.Run(); err != nil && ctx.Err() == nil {
				fail(fmt.Errorf("command: %w", err))
			}
		}()
	default:
		fmt.Fprintf(e.stderr, "iotap: capturing into %s; Ctrl-C stops\n", o.out)
		go func() {
			defer close(done)
			<-ctx.Done()
		}()
	}
	<-done
	clocks.Markers = append(clocks.Markers, timeline.Marker{Name: captureEndText, NS: monoNow()})
	if writeEnd != nil {
		writeEnd() // the recorder drains its buffers when stopped
	}
	stop()
	wg.Wait()

	if o.mmio && mmioStamped {
		ts, err := findMark(filepath.Join(o.out, captureMMIOFile), fmt.Sprintf("%s mono=%d", captureStartText, mmioStamp.m1))
		if err == nil {
			tc, _ := fs.TraceClock()
			clocks.Sources["mmio"] = timeline.SourceClock{Clock: "trace clock " + tc, OffsetNS: mmioStamp.mid() - ts}
		}
	}
	if o.mmio {
		if _, ok := clocks.Sources["mmio"]; !ok {
			fmt.Fprintln(e.stderr, "iotap: warning: mmio: the clock marker is not in the log: the MMIO trace is not aligned")
		}
	}
	if len(targets) > 0 {
		if _, ok := clocks.Sources["events"]; !ok {
			fmt.Fprintln(e.stderr, "iotap: warning: events: the clock marker was not recorded: user events are not aligned")
		}
	}
	if len(targets) > 0 {
		clocks.Markers = nil // the iotap_marker events show them already
	}
	cf, err := captureFile(o.out, captureClocksFile)
	if err != nil {
		return err
	}
	werr := timeline.WriteClocks(cf, clocks)
	if cerr := cf.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	if len(errs) > 0 {
		return fmt.Errorf("capture: %w", errors.Join(errs...))
	}
	fmt.Fprintf(e.stdout, "captured into %s (clocks in %s)\n", o.out, filepath.Join(o.out, captureClocksFile))
	if len(loss) > 0 && !o.allowLoss {
		return dataLostError("capture: %s (use --allow-loss to accept)", strings.Join(loss, "; "))
	}
	return nil
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
