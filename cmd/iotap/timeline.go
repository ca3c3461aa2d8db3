package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/regdb"
	"github.com/iotap/iotap/timeline"
	"github.com/spf13/cobra"
)

// timelineOptions are the flags of 'iotap timeline', and those of
// 'iotap report' that it shares.
type timelineOptions struct {
	timeline.Settings
	file      timeline.FileOptions // Out, MaxSize
	jsonOut   bool
	allowLoss lossFlag
	from, to  string // --from/--to (timerange.ParseSpec)
}

func newTimelineCmd(e *env) *cobra.Command {
	o := &timelineOptions{}
	c := &cobra.Command{
		Use: "timeline INPUT|DIR|-... -o FILE.pftrace",
		Example: `  iotap timeline cap/ -o cap.pftrace
  iotap timeline --clocks cap/clocks.json usb.pcapng mmio.log.zst -o all.pftrace
  iotap timeline --from 2s --to +500ms --max-size 0 e1000.log -o probe.pftrace
  ssh lab cat /tmp/usb.pcapng | iotap timeline - -o usb.pftrace`,
		Short: "Merge traces of all sources on one clock into a Perfetto trace",
		Long: `timeline reads usbmon captures (text, pcap, pcapng), mmiotrace logs (plain or
compressed) and user_events records (iotap events record --json), detected
from their content, merges their events by time and writes a Perfetto trace
(open it in https://ui.perfetto.dev):

  USB          a track per bus, device and endpoint; transfers as slices from
               submission to completion with the decoded request; a
               bandwidth counter per device
  MMIO         a track per PCI BAR; accesses as instants named by the
               register database (--db, else the shipped one for the device)
  user_events  a track per event; records as instants with their fields
  markers      mmiotrace MARK records, the iotap_marker user event and the
               clocks file's markers, on every source's track

A directory stands for the traces in it (an 'iotap capture' directory), and
its clocks.json is used unless --clocks is given. "-" reads a trace from
standard input (a pipe is read once, as it comes).

--clocks FILE (clocks.json, written by 'iotap capture') maps every source's
clock onto one. Without it each source starts at time 0 and a warning says
they are not aligned.

Interrupted (Ctrl-C, SIGTERM), timeline ends the trace validly with the
events merged so far, says so and exits 130.

--max-size (default 256MiB) bounds every file written, so that the Perfetto UI
opens each: the UI holds a whole trace in the browser tab's memory, 2 to 4
times the file size, and a tab typically gets 2 GB. When the full detail is
larger, timeline writes
  FILE.pftrace     the overview of the whole capture: per input, counters of
                   its events in time buckets (USB bytes/s, transfers/s and
                   errors/s per endpoint; MMIO accesses/s per BAR and for its
                   busiest registers, named; user_events per event name),
                   lost events and markers, and one slice per detail window
                   naming the file that holds it
  FILE.d/NNNN.pftrace  the full detail, split at time boundaries into windows
                   under the bound, on the same clock; each opens on its own
  FILE.d/index.json    the windows: time ranges, sizes, event counts, busiest
                   tracks
and prints the bucket width, the windows and their sizes. --max-size 0 writes
one file whatever its size (so does -o -).

--from/--to keep the events of [from, to) on the timeline's clock (relative
times count from its first event; @T is the timeline time in seconds;
mark:NAME a marker of the clocks file or of an input).

Exit status 3 when an input records lost or skipped events, unless --allow-loss.

` + timeWindowHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.file.Out == "" {
				return usageErrorf("timeline: -o FILE.pftrace is required (- for stdout)")
			}
			if err := o.file.Check(); err != nil {
				return usageErrorf("timeline: %v", err)
			}
			if o.file.Out == "-" && cmd.Flags().Changed("max-size") && o.file.MaxSize != 0 {
				return usageErrorf("timeline: --max-size needs -o FILE (stdout is one stream): use --max-size 0")
			}
			spec, err := timerange.ParseSpec(o.from, o.to)
			if err != nil {
				return usageErrorf("timeline: %v", err)
			}
			return runTimeline(e, o, args, spec)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.file.Out, "output", "o", "", "Perfetto trace to write (created 0600), - for stdout")
	f.StringVar(&o.Symbols, "symbols", "", mmioSymbolsHelp)
	f.StringVar(&o.DB, "db", "", "register database for MMIO names: a file (rnndb XML or YAML) or a shipped name ("+strings.Join(regdb.Builtins(), ", ")+")")
	f.StringVar(&o.from, "from", "", "keep events at or after `TIME` (see Times)")
	f.StringVar(&o.to, "to", "", windowToHelp)
	f.StringVar(&o.Clocks, "clocks", "", "clock sidecar (clocks.json) aligning the sources")
	f.DurationVar(&o.BandwidthWindow, "bandwidth-window", 100*time.Millisecond, "window of the USB bandwidth counters")
	f.BoolVar(&o.jsonOut, "json", false, "print the summary as NDJSON (docs/ndjson.md): input records, timeline_input per input, timeline_window per detail file, timeline_summary")
	o.allowLoss.add(f, "exit 0 even when inputs record lost events")
	f.BoolVar(&o.PTCalls, "pt-calls", false, "add the function calls of Intel PT inputs, perf.data or 'pt capture' directories (a track per thread, see 'pt calls')")
	ptFileFlags(f, "--pt-calls: ", &o.Sysroot, nil, nil, nil)
	f.DurationVar(&o.PTResolution, "pt-resolution", 0, "--pt-calls: draw only calls at least this long (as pt calls --resolution)")
	o.file.MaxSize = timeline.DefaultMaxSize
	f.Var((*timeline.Size)(&o.file.MaxSize), "max-size", "largest file to write (bytes, or with K/M/G/KiB/MiB/GiB); above it an overview plus detail windows in FILE.d/; 0: one file")
	return c
}

// exportTimeline writes the Perfetto trace of inputs to o.file.Out
// (timeline.ExportFile) with opt and the settings of o's flags.
func exportTimeline(e *env, o *timelineOptions, inputs []string, opt timeline.Options) (*timeline.FileResult, error) {
	if err := o.Check(); err != nil {
		return nil, usageErrorf("timeline: %v", err)
	}
	if opt.Warn == nil {
		opt.Warn = e.warn
	}
	opt.Stdin = os.Stdin
	if err := o.Apply(&opt); errors.Is(err, regdb.ErrNotFound) {
		return nil, usageErrorf("timeline: --db %v", err)
	} else if err != nil {
		return nil, err
	}
	m := e.meter("iotap: timeline", -1, o.file.Out == "-")
	warn := opt.Warn
	opt.Warn = func(s string) { m.Done(); warn(s) } // the warning on a line of its own
	opt.Progress = func(read, total int64) { m.SetTotal(total); m.Update(read) }
	fo := o.file
	fo.Stdout, fo.UILimit = e.stdout, perfettoUILimit
	fo.Create = e.createFile
	fo.SizeWarning = func(s string) { m.Done(); e.warn(s) }
	res, err := timeline.ExportFile(e.ctx, inputs, opt, fo)
	m.Done()
	if res != nil {
		e.written = append(e.written, res.Written()...)
	}
	return res, err
}

func runTimeline(e *env, o *timelineOptions, args []string, spec timerange.Spec) error {
	inputs, clocks, err := o.ExpandInputs(args)
	if clocks != "" {
		fmt.Fprintf(e.stderr, "iotap: timeline: clocks from %s\n", clocks)
	}
	if errors.Is(err, timeline.ErrStdinTwice) {
		return usageErrorf("timeline: %v", err)
	} else if err != nil {
		return err
	}
	res, err := exportTimeline(e, o, inputs, timeline.Options{Window: spec})
	if err != nil {
		return err
	}
	out := e.stderr // the trace may be on stdout
	if o.file.Out != "-" {
		out = e.stdout
	}
	if err := res.WriteSummary(out, o.jsonOut); err != nil {
		return err
	}
	if w := res.SizeWarning(); w != "" {
		e.warn(w)
	}
	return o.allowLoss.check(e, "timeline: ", res.Loss(), "use --allow-loss to accept")
}

// createFile creates an output written from inputs (env.createOutput),
// as timeline.FileOptions.Create and report.FileOptions.Create take it.
func (e *env) createFile(path string, inputs []string) (io.Writer, func() error, error) {
	f, err := e.createOutput(path, outfile.Atomic, inputs...)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Commit, nil
}

// perfettoUILimit is the trace size above which the Perfetto UI is
// unlikely to open a file: it loads the whole trace in the browser tab,
// which needs 2 to 4 times the file size in memory, and a tab gets about
// 2 GB (4 GB at most).
var perfettoUILimit int64 = timeline.DefaultMaxSize
