package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
	// fileClocks: clocks files of some inputs ('iotap report': each
	// directory's clocks.json for the traces of that directory).
	fileClocks func(path string) *timeline.Clocks
	window     time.Duration
	jsonOut    bool
	allowLoss  bool
	ptCalls    bool          // --pt-calls
	sysroot    string        // --sysroot
	ptRes      time.Duration // --pt-resolution
	symbols    string        // --symbols
	maxSize    sizeFlag
	// maxSizeSet: --max-size given (else the default, and none for -o -)
	maxSizeSet bool
	split      *timeline.SplitStats // set by a split export
	// warn, when set, receives the warnings (default: printed on stderr).
	warn func(string)
	// sizeWarned is set when the trace was estimated, early, to be too
	// big for the Perfetto UI (and the user warned).
	sizeWarned bool
	// from, to: --from/--to (timerange.Spec, parsed into window).
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
			o.maxSizeSet = cmd.Flags().Changed("max-size")
			if o.maxSizeSet && o.maxSize != 0 && o.maxSize < timeline.MinMaxSize {
				return usageErrorf("timeline: --max-size %d: at least %d bytes (or 0 for one file)", int64(o.maxSize), timeline.MinMaxSize)
			}
			if o.out == "-" && o.maxSizeSet && o.maxSize != 0 {
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

// timelineCreate creates the trace through e.createOutput (never over one
// of the inputs); "-" is stdout.
func timelineCreate(e *env, path string, inputs []string) (io.Writer, func() error, error) {
	f, err := e.createOutput(path, outfile.Atomic, inputs...)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Commit, nil
}

// exportTimeline writes the Perfetto trace of inputs to o.out.
func exportTimeline(e *env, o *timelineOptions, inputs []string) (*timeline.Stats, error) {
	if o.window <= 0 {
		return nil, usageErrorf("timeline: --bandwidth-window must be positive")
	}
	db, err := timelineLoadDB(o.db)
	if err != nil {
		return nil, err
	}
	opt := timeline.Options{DB: db, BandwidthWindowNS: o.window.Nanoseconds(), Window: o.timeRange,
		Warn: func(s string) { fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s) }}
	if o.warn != nil {
		opt.Warn = o.warn
	}
	if o.symbols != "" {
		if opt.Symbols, err = mmioLoadSymbols(o.symbols, opt.Warn); err != nil {
			return nil, err
		}
	}
	m := e.meter("iotap: timeline", -1, o.out == "-")
	warn := opt.Warn
	opt.Warn = func(s string) { m.Done(); warn(s) } // the warning on a line of its own
	out := &countWriter{}
	early := false
	opt.Progress = func(read, total int64) {
		m.SetTotal(total)
		m.Update(read)
		if !early && o.out != "-" && o.maxSize == 0 {
			if est, ok := timeline.EstimateSize(read, total, out.n); ok && est > perfettoUILimit {
				early = true
				m.Done()
				timelineSizeWarning(e, o.out, est, true)
			}
		}
	}
	if o.clocks != "" {
		c, err := timeline.LoadClocks(o.clocks)
		if err != nil {
			return nil, err
		}
		opt.Clocks = c
	}
	opt.FileClocks = o.fileClocks
	opt.Stdin = os.Stdin
	if o.ptCalls {
		var dirs []string
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(home, ".debug"))
		}
		opt.PTCalls = &calls.Options{Finder: calls.Finder(o.sysroot, dirs), Demangle: true, Resolution: uint64(o.ptRes.Nanoseconds())}
	}
	if o.out != "-" && o.maxSize != 0 {
		sst, err := timeline.ExportSplit(e.ctx, o.out, inputs, opt, timeline.SplitOptions{MaxSize: int64(o.maxSize)})
		if sst != nil {
			o.split = sst
		}
		if err != nil {
			if sst != nil && sst.Stats != nil && sst.Interrupted {
				if fi, serr := os.Stat(o.out); serr == nil {
					e.written = append(e.written, fmt.Sprintf("%s (%d bytes, complete up to the interruption)", o.out, fi.Size()))
				}
				if sst.Split {
					e.written = append(e.written, fmt.Sprintf("%s/ (%d windows)", sst.Dir, len(sst.Index.Windows)))
				}
			}
			if sst != nil {
				return sst.Stats, fmt.Errorf("timeline: %w", err)
			}
			return nil, fmt.Errorf("timeline: %w", err)
		}
		return sst.Stats, nil
	}
	w, closeOut, err := timelineCreate(e, o.out, inputs)
	if err != nil {
		return nil, err
	}
	out.w = w
	st, err := timeline.Export(e.ctx, out, inputs, opt)
	m.Done()
	o.sizeWarned = early
	switch {
	case err == nil:
		err = closeOut()
	case st != nil && st.Interrupted:
		// SIGINT/SIGTERM: the trace was ended validly with the events
		// read so far; keep it (run reports it, exit 130).
		if cerr := closeOut(); cerr != nil {
			err = cerr
		}
	} // else run removes the partial trace (an existing file stays)
	if err != nil {
		return st, fmt.Errorf("timeline: %w", err)
	}
	return st, nil
}

// timelineInputs expands directory arguments into the traces they hold
// (not recursively) and, without --clocks, takes a directory's clocks.json.
func timelineInputs(e *env, o *timelineOptions, args []string) ([]string, error) {
	var inputs []string
	stdin := 0
	for _, a := range args {
		if a == "-" {
			if stdin++; stdin > 1 {
				return nil, usageErrorf("timeline: - (standard input) may be given once")
			}
			inputs = append(inputs, a)
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			inputs = append(inputs, a)
			continue
		}
		traces, clocks, err := timeline.DirInputs(a)
		if clocks != "" && o.clocks == "" {
			o.clocks = clocks
			fmt.Fprintf(e.stderr, "iotap: timeline: clocks from %s\n", clocks)
		}
		if err != nil {
			return nil, err
		}
		if len(traces) == 0 {
			return nil, fmt.Errorf("timeline: %s: no trace in this directory", a)
		}
		inputs = append(inputs, traces...)
	}
	return inputs, nil
}

func runTimeline(e *env, o *timelineOptions, args []string) error {
	inputs, err := timelineInputs(e, o, args)
	if err != nil {
		return err
	}
	st, err := exportTimeline(e, o, inputs)
	if err != nil {
		return err
	}
	out := e.stderr // the trace may be on stdout
	if o.out != "-" {
		out = e.stdout
	}
	if o.jsonOut {
		if _, err := out.Write(st.AppendNDJSON(nil, o.split)); err != nil {
			return err
		}
	} else {
		if o.split != nil && o.split.Split {
			st.WriteTable(out, o.split.Dir+"/ (detail, all windows)")
			o.split.WriteWindows(out, o.out)
		} else {
			st.WriteTable(out, o.out)
		}
	}
	if fi, err := os.Stat(o.out); o.out != "-" && o.maxSize == 0 && err == nil && fi.Mode().IsRegular() {
		if !o.sizeWarned {
			timelineSizeWarning(e, o.out, fi.Size(), false)
		} else if fi.Size() > perfettoUILimit {
			fmt.Fprintf(e.stderr, "iotap: warning: %s is %d MB, over the %d MB the Perfetto UI opens (see above)\n", o.out, fi.Size()>>20, perfettoUILimit>>20)
		}
	}
	return e.dataLoss(o.allowLoss, "timeline: ", st.Loss(), "use --allow-loss to accept")
}

// perfettoUILimit is the trace size above which the Perfetto UI is
// unlikely to open a file: it loads the whole trace in the browser tab,
// which needs 2 to 4 times the file size in memory, and a tab gets about
// 2 GB (4 GB at most).
var perfettoUILimit int64 = timeline.DefaultMaxSize

// timelineSizeWarning warns when the trace is (estimated, early, to be)
// too big for the Perfetto UI and says what to do instead.
func timelineSizeWarning(e *env, path string, size int64, estimated bool) {
	if w := timeline.SizeWarning(path, size, perfettoUILimit, estimated); w != "" {
		fmt.Fprintf(e.stderr, "iotap: warning: %s\n", w)
	}
}

// sizeFlag is a byte count given as 1000, 64K, 256MiB, 1G...
type sizeFlag int64

func (s *sizeFlag) String() string {
	v := int64(*s)
	for _, u := range []struct {
		n    string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v != 0 && v%u.size == 0 {
			return fmt.Sprintf("%d%s", v/u.size, u.n)
		}
	}
	return fmt.Sprint(v)
}

func (s *sizeFlag) Type() string { return "size" }

func (s *sizeFlag) Set(v string) error {
	t := strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range []struct {
		suf  string
		mult int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return fmt.Errorf("%q is not a size (bytes, or a number with K, M, G, KiB, MiB, GiB, KB, MB, GB)", v)
	}
	*s = sizeFlag(n * mult)
	return nil
}
