package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/report"
	"github.com/iotap/iotap/timeline"
	"github.com/spf13/cobra"
)

type reportOptions struct {
	allowLoss lossFlag
	outs      []string
	format    string
	json      bool
	verbose   bool
	tl        timelineOptions // -o FILE.pftrace
	window    windowFlags     // --from/--to (window.go)
}

func newReportCmd(e *env) *cobra.Command {
	o := &reportOptions{tl: timelineOptions{Settings: timeline.Settings{BandwidthWindow: 100 * time.Millisecond}}}
	c := &cobra.Command{
		Use:   "report DIR|BUNDLE|FILE... [-o FILE.html] [-o FILE.pftrace]",
		Short: "Summarise every trace found in directories or files, whatever its source",
		Long: `report walks the given directories (recursively) and files, recognises each
trace by its content (usbmon text, pcap or pcapng; mmiotrace logs, plain or
compressed; Intel PT raw streams or perf.data; user_events NDJSON records) and
prints, per trace, the summary of the matching 'stats' verb, then a loss
report over all of them. Files that are not traces are listed with what they
are and why they are not a trace. A named pipe is read once, like "-".
A bundle (a .tar.gz such as 'iotap mmio capture --bundle' writes) is read
like a directory. "-" reads a trace or a bundle from standard input.

-o FILE writes the report as a file too, of the kind its extension names
(or --format); -o may be given several times:

  .html                      one self-contained HTML page with charts (inline
                             SVG, no script, no network): per source throughput,
                             latency histograms, errors, devices; MMIO accesses
                             per BAR, a register heatmap, hot registers, values;
                             user_events rates and fields; PT packet statistics.
                             Open it in any browser, from disk.
  .pftrace, .perfetto-trace  the USB, MMIO and user_events traces merged into one
                             Perfetto trace, as 'iotap timeline' does (open it
                             in https://ui.perfetto.dev)
  .json, .ndjson             the report as NDJSON, as --json prints it

A clocks.json found among the inputs (or --clocks) aligns the traces of its
directory: they share one time axis in the HTML and the Perfetto trace.

Latency percentiles are printed with the precision they have (3 significant
digits); an endpoint with fewer than 100 transfers has no p99 ("(n=N)"), its
MAX is the largest latency seen. Warnings are summarised in one line each;
-v prints every one.

Exit status 3 when any trace records lost or dropped data (the last line names
those traces), unless --allow-loss; 1 when the arguments hold no file at all
(an empty directory): there is nothing to report.`,
		Example: `  iotap report testdata -o report.html -o timeline.pftrace
  iotap report capture-dir/ --json | jq 'select(.kind == "usb_endpoint") | .latency.p99_ns'
  iotap report bundle.tar.gz -o out.html
  ssh lab cat /tmp/usb.pcapng | iotap report - -o usb.html
  iotap report capture.pcapng mmio.log.zst --format html -o -  > report.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.tl.file.Check(); err != nil {
				return usageErrorf("report: %v", err)
			}
			spec, err := o.window.spec("report")
			if err != nil {
				return err
			}
			return runReport(e, args, o, spec)
		},
	}
	f := c.Flags()
	o.allowLoss.add(f, "exit 0 even when a trace records lost data")
	f.StringArrayVarP(&o.outs, "output", "o", nil, "also write the report to `FILE` (.html, .pftrace/.perfetto-trace or .json; created 0600); repeatable")
	f.StringVar(&o.format, "format", "", "kind of the -o file when its extension does not say: `html|perfetto|json`")
	f.BoolVar(&o.json, "json", false, "print the report as NDJSON instead of text")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every warning and every device without identity")
	f.StringVar(&o.tl.DB, "db", "", "register database for MMIO names in the Perfetto trace (file or shipped name)")
	f.StringVar(&o.tl.Clocks, "clocks", "", "clock sidecar aligning the sources (default: a clocks.json among the inputs)")
	o.tl.file.MaxSize = timeline.DefaultMaxSize
	f.Var((*timeline.Size)(&o.tl.file.MaxSize), "max-size", "largest Perfetto file to write, as 'iotap timeline --max-size' (above it an overview plus detail windows in FILE.d/, linked from the HTML page); 0: one file")
	o.window.add(f, "report only the records at or after `TIME` of each trace: seconds from its first record (1.5, 200ms), @T on its clock, RFC 3339, or mark:NAME (see 'iotap cut --help'); each trace is cut as 'iotap cut' cuts it", windowToHelp, "")
	return c
}

// reportUnidentified is the remedy for USB devices without identity.
const reportUnidentified = "enumeration not in the capture; on the machine that captured it, 'iotap usb stats --sysfs /sys/bus/usb/devices FILE' names them"

func runReport(e *env, args []string, o *reportOptions, spec timerange.Spec) error {
	kinds, err := report.OutputKinds(o.outs, o.format)
	if err != nil {
		return usageErrorf("report: %v", err)
	}
	// An -o naming an input is refused before the report is built and
	// printed, not after.
	ins := e.inputSet(args...)
	for _, out := range o.outs {
		if err := ins.Check(out); err != nil {
			return err
		}
	}
	opt := report.Options{Stdin: os.Stdin, Window: spec, Warn: e.warn}
	m := e.meter("iotap: report", -1, false)
	opt.Progress = report.ByteProgress(func(done int64, status string) { m.Update(done); m.SetStatus(status) })
	r, err := report.Build(e.ctx, args, opt)
	m.Done()
	if err != nil {
		return windowUsage("report", err)
	}
	defer r.Close()
	text := e.stdout
	if o.json {
		err, text = r.WriteJSON(e.stdout), io.Discard
	} else {
		err = r.WriteText(e.stdout, report.TextOptions{Unidentified: reportUnidentified, Fold: !o.verbose})
	}
	if err != nil {
		return err
	}
	err = r.WriteFiles(e.ctx, text, o.outs, kinds, report.FileOptions{Create: e.createFile,
		Timeline: report.TimelineOptions{ClocksFile: o.tl.Clocks, Verbose: o.verbose, Warn: e.warn},
		Export: func(_ context.Context, out string, inputs []string, opt timeline.Options) (*timeline.FileResult, error) {
			to := o.tl
			to.file.Out = out
			return exportTimeline(e, &to, inputs, opt)
		},
		HTML: report.HTMLOptions{Unidentified: reportUnidentified}})
	if err != nil {
		return err
	}
	if msg := r.LossError(); msg != "" && !bool(o.allowLoss) {
		return dataLostError("%s", msg)
	}
	if t := r.FirstError(); t != nil {
		return fmt.Errorf("%s: %v", t.Name, t.Err)
	}
	return nil
}
