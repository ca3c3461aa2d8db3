package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/iotap/iotap/report"
	"github.com/iotap/iotap/timeline"
	"github.com/spf13/cobra"
)

func newReportCmd(e *env) *cobra.Command {
	var allowLoss bool
	to := &timelineOptions{window: 100 * time.Millisecond}
	c := &cobra.Command{
		Use:   "report DIR|BUNDLE|FILE... [-o FILE.pftrace]",
		Short: "Summarise every trace found in directories or files, whatever its source",
		Long: `report walks the given directories (recursively) and files, recognises each
trace by its content (usbmon text, pcap or pcapng; mmiotrace logs, plain or
compressed; Intel PT raw streams or perf.data; user_events NDJSON records) and
prints, per trace, the summary of the matching 'stats' verb, then a loss
report over all of them. Files that are not traces are listed, not read.
A bundle (a .tar.gz such as 'iotap mmio capture --bundle' writes) is read
like a directory.

With -o FILE.pftrace, report also merges the USB, MMIO and user_events traces
into one Perfetto trace, as 'iotap timeline' does; a clocks.json found among
the inputs (or --clocks) aligns their clocks.

Exit status 3 when any trace records lost or dropped data, unless --allow-loss.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			to.allowLoss = allowLoss
			return runReport(e, args, allowLoss, to)
		},
	}
	c.Flags().BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when a trace records lost data")
	c.Flags().StringVarP(&to.out, "output", "o", "", "also write the merged Perfetto trace to FILE (created 0600)")
	c.Flags().StringVar(&to.db, "db", "", "register database for MMIO names in the Perfetto trace (file or shipped name)")
	c.Flags().StringVar(&to.clocks, "clocks", "", "clock sidecar aligning the sources (default: a clocks.json among the inputs)")
	return c
}

func runReport(e *env, args []string, allowLoss bool, to *timelineOptions) error {
	var opt report.Options
	opt.PT.Config = ptSidecarConfig
	r, err := report.Build(e.ctx, args, opt)
	if err != nil {
		return err
	}
	defer r.Close()
	err = r.WriteText(e.stdout, report.TextOptions{
		Unidentified: "identity not captured (enumeration not in the capture; try --sysfs on a live system)",
	})
	if err != nil {
		return err
	}
	if to.out != "" {
		if err := reportTimeline(e, r, to); err != nil {
			return err
		}
	}
	if n := r.Lossy(); n > 0 && !allowLoss {
		return dataLostError("%d of %d traces record lost data", n, len(r.Traces))
	}
	if t := r.FirstError(); t != nil {
		return fmt.Errorf("%s: %v", t.Name, t.Err)
	}
	return nil
}

// reportTimeline writes the Perfetto trace of the report's USB, MMIO and
// user_events traces.
func reportTimeline(e *env, r *report.Report, to *timelineOptions) error {
	var inputs, skipped []string
	for _, t := range r.Traces {
		switch {
		case t.Err != nil:
			skipped = append(skipped, t.Path+" (unreadable)")
		default:
			inputs = append(inputs, t.Path)
		}
	}
	fmt.Fprintf(e.stdout, "\n== timeline: %s\n", to.out)
	for _, s := range skipped {
		fmt.Fprintf(e.stdout, "not in the timeline: %s\n", s)
	}
	if len(inputs) == 0 {
		return fmt.Errorf("report: no trace to put in %s", to.out)
	}
	o := *to
	if o.clocks != "" {
		fmt.Fprintf(e.stdout, "clocks: %s (all inputs)\n", o.clocks)
	} else {
		// A clocks.json aligns the traces of its own directory (an
		// 'iotap capture' directory), not the others.
		byDir := map[string]*timeline.Clocks{}
		for _, p := range r.Clocks {
			c, err := timeline.LoadClocks(p.Path)
			if err != nil {
				return err
			}
			byDir[filepath.Dir(p.Path)] = c
			fmt.Fprintf(e.stdout, "clocks: %s (the traces of %s)\n", p.Name, filepath.Dir(p.Name))
		}
		for _, in := range inputs {
			if c, ok := byDir[filepath.Dir(in)]; ok {
				if o.inputClocks == nil {
					o.inputClocks = map[string]*timeline.Clocks{}
				}
				o.inputClocks[in] = c
			}
		}
	}
	st, err := exportTimeline(e, &o, inputs)
	if err != nil {
		return err
	}
	printTimelineStats(e.stdout, o.out, st)
	return nil
}
