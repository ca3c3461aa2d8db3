package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/userevents"
)

func newEventsRecordCmd(e *env) *cobra.Command {
	var (
		a         userevents.RecordArgs
		allowLoss lossFlag
		rot       rotateFlags
	)
	c := &cobra.Command{
		Use: "record NAME|'NAME FIELDS'... -o FILE",
		Example: `  sudo iotap events record iotap_marker -o events.ndjson --json
  sudo iotap events record 'myapp_req u32 id; u64 bytes' --duration 10s -o - --json | jq .fields
  sudo iotap events record --count 100 --perf iotap_marker -o events.ndjson --json
  sudo iotap events record --json --file-size 100M --ring 5 --interval 1s myapp_req -o req.ndjson`,
		Short: "Record user events until interrupted",
		Long: `Record user events from the per-CPU binary ring buffers of a private ftrace
instance, decoded with each event's format file, until SIGINT (or --duration,
or --count events).

An argument with fields ('req u32 id; __rel_loc char[] path') is registered
first and kept registered while recording, so writers that start later (e.g.
'iotap events write req id=1 path=/x') are caught. A bare NAME must already
be registered.

Output: one line per event; with --json one object per line:
an "input" record, then {"kind":"user_event","ts_ns":…,"cpu":…,"tid":…,"fields":{…},…}
(docs/ndjson.md; ts_ns: trace clock in ns).
With --perf the events are read through perf rings instead (perf_event_open
on each event's tracepoint, one ring of --buffer-kb per event and CPU, rounded
up to a power of two pages), as perf record does; ftrace is not touched.

--file-size/--file-duration split the output into files, like tshark -b:
-o x.ndjson writes x_00001_TIME.ndjson, x_00002_TIME.ndjson, ..., a new
file only between two events (with --json each file starts with the
"input" record); --ring N keeps the newest N. --interval D
prints, every D, the events and bytes written, like perf stat -I; the lines
add up to the events recorded.

Lost events are counted (ring-buffer page flags and per-CPU overruns; with
--perf, the kernel's lost-sample counts) and reported; the exit status is 3
when any were lost, unless --allow-loss.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			a.Targets, a.Rotate = args, rot.Args
			fopt, err := a.FileOptions()
			if ae := (*userevents.ArgError)(nil); errors.As(err, &ae) && ae.Arg == "rotate" {
				return usageErrorf("%v", err)
			} else if err != nil {
				return usageErrorf("events record: %v", err)
			}
			fopt.Create = commitCreate(e)
			fopt.Lines.Logf = func(f string, v ...any) { fmt.Fprintf(e.stderr, "iotap: "+f+"\n", v...) }
			fopt.Lines.OnStart = func() {
				fmt.Fprintf(e.stderr, "iotap: recording %d event(s); stop with Ctrl-C\n", len(fopt.Lines.Events))
			}
			fopt.Lines.OnInterval = rot.onInterval(e)
			res, runErr := userevents.RecordToFile(e.ctx, fopt)
			if runErr != nil {
				if errors.Is(runErr, userevents.ErrNotFound) {
					return usageErrorf("%v", runErr)
				}
				return explain(runErr)
			}
			if fopt.Rotate != nil {
				fmt.Fprintf(e.stderr, "iotap: files: %v\n", res.Files)
			}
			fmt.Fprintf(e.stderr, "iotap: recorded %d event(s), lost %d\n", res.Events, res.Lost)
			if l := res.Loss(); l != "" {
				return allowLoss.end(e, "events record: "+l, " (grow --buffer-kb; --allow-loss to accept)")
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&a.Path, "output", "o", "", "output file (created 0600), - for stdout")
	fl.BoolVar(&a.Lines.JSON, "json", false, "one JSON object per line")
	fl.IntVar(&a.Lines.BufferKB, "buffer-kb", 4096, "ring buffer per CPU in KiB")
	allowLoss.add(fl, "exit 0 even when events were lost")
	fl.DurationVar(&a.Duration, "duration", 0, "stop after this long")
	fl.Uint64Var(&a.Lines.Count, "count", 0, "stop after this many events")
	fl.BoolVar(&a.Lines.Perf, "perf", false, "read through perf rings instead of an ftrace instance")
	rot.add(fl, ".ndjson", "events and bytes")
	return linuxOnly(c)
}
