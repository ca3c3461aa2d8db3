package main

import (
	"errors"
	"fmt"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/userevents"
	"github.com/spf13/cobra"
)

// newEventsReadCmd is `iotap events read`: tracepoint samples of a
// perf.data file, decoded with the formats the file stores.
func newEventsReadCmd(e *env) *cobra.Command {
	var out, expr string
	var window windowFlags
	var jsonOut bool
	var allowLoss lossFlag
	c := &cobra.Command{
		Use:   "read PERF.DATA",
		Short: "Decode the user_events (and other tracepoint) samples of a perf.data file",
		Long: `Reads a perf.data file written by 'perf record -e user_events:NAME' (file or
pipe mode; - reads standard input, pipe mode only) and prints its tracepoint samples
decoded with the event formats perf stored in the file, in the same text or JSON as
'iotap events record'. Samples are in file order (perf writes them per CPU, in rounds).

Lost samples (PERF_RECORD_LOST) and samples that cannot be decoded are counted on
stderr; the exit status is then 3 unless --allow-loss.`,
		Example: `  perf record -e user_events:http_req -o req.data -- ./server
  iotap events read req.data
  iotap events read --json req.data > req.json
  iotap events read -Y 'event.name == "http_req" && event.status >= 500' req.data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := window.spec("events read")
			if err != nil {
				return err
			}
			job := userevents.ReadJob{Path: args[0], Filter: expr, Window: spec, JSON: jsonOut}
			if err := job.Prepare(e.ctx); err != nil {
				if ae := (*userevents.ArgError)(nil); !errors.As(err, &ae) {
					return err
				} else if ae.Arg == "window" {
					return usageErrorf("events read: %v", err)
				}
				return usageErrorf("%v", err)
			}
			r, err := job.Open()
			if err != nil {
				return err
			}
			defer r.Close()
			if out == "" {
				out = "-"
			}
			w, err := e.createOutput(out, outfile.InPlace, args[0])
			if err != nil {
				return err
			}
			_, readErr := job.Run(e.ctx, r, w)
			if e.ctx.Err() != nil {
				return e.interrupted(e.ctx.Err())
			}
			if err := w.Commit(); err != nil {
				return err
			}
			for _, s := range r.Warnings {
				fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s)
			}
			for _, err := range r.Errors {
				fmt.Fprintf(e.stderr, "iotap: %v\n", err)
			}
			if readErr != nil {
				return readErr
			}
			if msg := job.PastEnd(); msg != "" {
				e.warn(msg)
			}
			st := r.Stats()
			fmt.Fprintf(e.stderr, "iotap: %s\n", st)
			if l := st.Loss(); l != "" && !allowLoss {
				return dataLostError("events read: %s (--allow-loss to accept)", l)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&out, "output", "o", "", "output file (created 0600), - for stdout")
	fl.BoolVar(&jsonOut, "json", false, "one JSON object per line")
	fl.StringVarP(&expr, "filter", "Y", "", "print only the events matching the display-filter `EXPR` (event.name, event.FIELD, ...: docs/filters.md)")
	allowLoss.add(fl, "exit 0 even when events were lost")
	window.add(fl, "only events at or after `TIME`: seconds from the first event (1.5, 200ms), @T on the samples' clock, or mark:NAME (an iotap_marker event; see 'iotap cut --help')", windowToHelp, "")
	return c
}
