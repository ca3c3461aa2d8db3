package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/regdb"
	"github.com/iotap/iotap/timeline"
	"github.com/spf13/cobra"
)

type timelineOptions struct {
	out    string
	db     string
	clocks string
	// fileClocks, warn: set by 'iotap report' (report.Report.WriteTimeline).
	fileClocks func(path string) *timeline.Clocks
	warn       func(string)
	window     time.Duration
	jsonOut    bool
	allowLoss  bool
	ptCalls    bool          // --pt-calls
	sysroot    string        // --sysroot
	ptRes      time.Duration // --pt-resolution
	symbols    string        // --symbols
	maxSize    sizeFlag
	// from, to: --from/--to (timerange.Spec, parsed into timeRange).
	from, to  string
	timeRange timerange.Spec
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
			if o.out == "" {
				return usageErrorf("timeline: -o FILE.pftrace is required (- for stdout)")
			}
			maxSizeSet := cmd.Flags().Changed("max-size")
			if maxSizeSet && o.maxSize != 0 && o.maxSize < timeline.MinMaxSize {
				return usageErrorf("timeline: --max-size %d: at least %d bytes (or 0 for one file)", int64(o.maxSize), timeline.MinMaxSize)
			}
			if o.out == "-" && maxSizeSet && o.maxSize != 0 {
				return usageErrorf("timeline: --max-size needs -o FILE (stdout is one stream): use --max-size 0")
			}
			spec, err := timerange.ParseSpec(o.from, o.to)
			if err != nil {
				return usageErrorf("timeline: %v", err)
			}
			o.timeRange = spec
			return runTimeline(e, o, args)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.out, "output", "o", "", "Perfetto trace to write (created 0600), - for stdout")
	f.StringVar(&o.symbols, "symbols", "", mmioSymbolsHelp)
	f.StringVar(&o.db, "db", "", "register database for MMIO names: a file (rnndb XML or YAML) or a shipped name ("+strings.Join(regdb.Builtins(), ", ")+")")
	f.StringVar(&o.from, "from", "", "keep events at or after `TIME` (see Times)")
	f.StringVar(&o.to, "to", "", "keep events before `TIME`")
	f.StringVar(&o.clocks, "clocks", "", "clock sidecar (clocks.json) aligning the sources")
	f.DurationVar(&o.window, "bandwidth-window", 100*time.Millisecond, "window of the USB bandwidth counters")
	f.BoolVar(&o.jsonOut, "json", false, "print the summary as NDJSON (docs/ndjson.md): input records, timeline_input per input, timeline_window per detail file, timeline_summary")
	f.BoolVar(&o.allowLoss, "allow-loss", false, "exit 0 even when inputs record lost events")
	f.BoolVar(&o.ptCalls, "pt-calls", false, "add the function calls of Intel PT inputs, perf.data or 'pt capture' directories (a track per thread, see 'pt calls')")
	f.StringVar(&o.sysroot, "sysroot", "", "--pt-calls: look for the traced programs' files under `DIR`")
	f.DurationVar(&o.ptRes, "pt-resolution", 0, "--pt-calls: draw only calls at least this long (as pt calls --resolution)")
	o.maxSize = timeline.DefaultMaxSize
	f.Var(&o.maxSize, "max-size", "largest file to write (bytes, or with K/M/G/KiB/MiB/GiB); above it an overview plus detail windows in FILE.d/; 0: one file")
	return c
}

// timelineLoadDB loads --db: a file, or else a shipped database name.
func timelineLoadDB(spec string) (*regdb.DB, error) {
	if spec == "" {
		return nil, nil
	}
	return loadDB("timeline", spec)
}

// loadDB loads the --db spec of the command cmd (regdb.Open): a spec that
// is neither a file nor a shipped name is a usage error.
func loadDB(cmd, spec string) (*regdb.DB, error) {
	db, err := regdb.Open(spec)
	if errors.Is(err, regdb.ErrNotFound) {
		return nil, usageErrorf("%s: --db %v", cmd, err)
	}
	return db, err
}

// exportTimeline writes the Perfetto trace of inputs to o.out
// (timeline.ExportFile) with the options of o's flags.
func exportTimeline(e *env, o *timelineOptions, inputs []string) (*timeline.FileResult, error) {
	if o.window <= 0 {
		return nil, usageErrorf("timeline: --bandwidth-window must be positive")
	}
	db, err := timelineLoadDB(o.db)
	if err != nil {
		return nil, err
	}
	opt := timeline.Options{DB: db, BandwidthWindowNS: o.window.Nanoseconds(), Window: o.timeRange, FileClocks: o.fileClocks, Stdin: os.Stdin,
		Warn: func(s string) { fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s) }}
	if o.warn != nil {
		opt.Warn = o.warn
	}
	if o.symbols != "" {
		if opt.Symbols, err = symbolsFlag(o.symbols).load(opt.Warn); err != nil {
			return nil, err
		}
	}
	m := e.meter("iotap: timeline", -1, o.out == "-")
	warn := opt.Warn
	opt.Warn = func(s string) { m.Done(); warn(s) } // the warning on a line of its own
	opt.Progress = func(read, total int64) { m.SetTotal(total); m.Update(read) }
	if o.clocks != "" {
		if opt.Clocks, err = timeline.LoadClocks(o.clocks); err != nil {
			return nil, err
		}
	}
	if o.ptCalls {
		opt.PTCalls = &calls.Options{Finder: calls.Finder(o.sysroot, calls.BuildIDDirs(nil, nil)), Demangle: true, Resolution: uint64(o.ptRes.Nanoseconds())}
	}
	res, err := timeline.ExportFile(e.ctx, inputs, opt, timeline.FileOptions{Out: o.out, Stdout: e.stdout, MaxSize: int64(o.maxSize), UILimit: perfettoUILimit,
		Create: func(path string, inputs []string) (io.Writer, func() error, error) {
			f, err := e.createOutput(path, outfile.Atomic, inputs...)
			if err != nil {
				return nil, nil, err
			}
			return f, f.Commit, nil
		},
		SizeWarning: func(s string) { m.Done(); fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s) }})
	m.Done()
	if res != nil {
		e.written = append(e.written, res.Written()...)
	}
	return res, err
}

func runTimeline(e *env, o *timelineOptions, args []string) error {
	inputs, clocks, err := timeline.ExpandInputs(args)
	if clocks != "" && o.clocks == "" {
		o.clocks = clocks
		fmt.Fprintf(e.stderr, "iotap: timeline: clocks from %s\n", clocks)
	}
	if errors.Is(err, timeline.ErrStdinTwice) {
		return usageErrorf("timeline: %v", err)
	} else if err != nil {
		return err
	}
	res, err := exportTimeline(e, o, inputs)
	if err != nil {
		return err
	}
	out := e.stderr // the trace may be on stdout
	if o.out != "-" {
		out = e.stdout
	}
	if err := res.WriteSummary(out, o.jsonOut); err != nil {
		return err
	}
	if w := res.SizeWarning(); w != "" {
		fmt.Fprintf(e.stderr, "iotap: warning: %s\n", w)
	}
	return e.dataLoss(o.allowLoss, "timeline: ", res.Loss(), "use --allow-loss to accept")
}

// perfettoUILimit is the trace size above which the Perfetto UI is
// unlikely to open a file: it loads the whole trace in the browser tab,
// which needs 2 to 4 times the file size in memory, and a tab gets about
// 2 GB (4 GB at most).
var perfettoUILimit int64 = timeline.DefaultMaxSize

// sizeFlag is a byte count given as 1000, 64K, 256MiB, 1G...
// (timeline.ParseSize).
type sizeFlag int64

func (s *sizeFlag) String() string { return timeline.FormatSize(int64(*s)) }
func (s *sizeFlag) Type() string   { return "size" }
func (s *sizeFlag) Set(v string) error {
	n, err := timeline.ParseSize(v)
	if err == nil {
		*s = sizeFlag(n)
	}
	return err
}
