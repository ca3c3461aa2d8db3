//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/userevents"
	"github.com/spf13/cobra"
)

func newEventsRecordCmd(e *env) *cobra.Command {
	var (
		out       string
		jsonOut   bool
		bufferKB  int
		allowLoss bool
		duration  time.Duration
		count     uint64
		perf      bool
	)
	c := &cobra.Command{
		Use: "record NAME|'NAME FIELDS'... -o FILE",
		Example: `  sudo iotap events record iotap_marker -o events.ndjson --json
  sudo iotap events record 'myapp_req u32 id; u64 bytes' --duration 10s -o - --json | jq .fields
  sudo iotap events record --count 100 --perf iotap_marker -o events.ndjson --json`,
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

Lost events are counted (ring-buffer page flags and per-CPU overruns; with
--perf, the kernel's lost-sample counts) and reported; the exit status is 3
when any were lost, unless --allow-loss.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return usageErrorf("events record: -o FILE is required (- for stdout)")
			}
			type target struct {
				sys, name string
				schema    *userevents.Schema
			}
			var targets []target
			for _, a := range args {
				name, s, err := splitEventArg(a)
				if err != nil {
					return err
				}
				sys := userevents.System
				if !userevents.ValidName(name) {
					sys = userevents.MultiSystem
				}
				targets = append(targets, target{sys, name, s})
			}
			fs, err := eventsFS()
			if err != nil {
				return err
			}
			var p *userevents.Producer
			for _, t := range targets {
				if s := t.schema; s != nil {
					if p == nil {
						if p, err = userevents.OpenFS(fs); err != nil {
							return explain(err)
						}
						defer p.Close()
					}
					if _, err := p.RegisterSchema(s, 0); err != nil {
						return explain(err)
					}
				}
			}
			var r eventSource
			if perf {
				pr, err := userevents.NewPerfReader(fs, perfPages(bufferKB))
				if err != nil {
					return explain(err)
				}
				r = perfSource{pr}
			} else {
				fr, err := userevents.NewRecorder(fs, bufferKB)
				if err != nil {
					return explain(err)
				}
				reportStale(e, fr)
				r = ftraceSource{fr}
			}
			defer r.Close()
			for _, t := range targets {
				if _, err := r.Add(t.sys, t.name); err != nil {
					if errors.Is(err, userevents.ErrNotFound) {
						return usageErrorf("%v", err)
					}
					return explain(err)
				}
			}
			if out == "" {
				out = "-"
			}
			w, err := e.createOutput(out, outfile.InPlace)
			if err != nil {
				return err
			}
			closeOut := w.Commit
			bw := bufio.NewWriterSize(w, 64<<10)
			ctx, cancel := e.ctx, func() {}
			if duration > 0 {
				ctx, cancel = contextWithTimeout(e.ctx, duration)
			}
			defer cancel()
			var n uint64
			var line []byte
			if jsonOut {
				format, clock := userevents.FormatTracefs, userevents.ClockTrace
				if perf {
					format, clock = userevents.FormatPerfRing, userevents.ClockPerf
				}
				bw.Write(userevents.AppendNDJSONInput(nil, "", format, clock))
			}
			if err := r.Start(); err != nil {
				return explain(err)
			}
			fmt.Fprintf(e.stderr, "iotap: recording %d event(s); stop with Ctrl-C\n", len(targets))
			runErr := r.Run(ctx, func(rec *userevents.Recorded) error {
				if jsonOut {
					line = userevents.AppendNDJSON(line, rec)
				} else {
					line = append(userevents.AppendText(line, rec), '\n')
				}
				if _, err := bw.Write(line); err != nil {
					return err
				}
				line = line[:0]
				n++
				if count > 0 && n >= count {
					cancel()
				}
				return nil
			})
			if err := bw.Flush(); err != nil && runErr == nil {
				runErr = err
			}
			if err := closeOut(); err != nil && runErr == nil {
				runErr = err
			}
			if runErr != nil {
				return runErr
			}
			events, lost, bad := r.counts()
			fmt.Fprintf(e.stderr, "iotap: recorded %d event(s), lost %d\n", events, lost)
			if bad > 0 || lost > 0 {
				if !allowLoss {
					return dataLostError("events record: %d event(s) lost, %d undecodable (grow --buffer-kb; --allow-loss to accept)", lost, bad)
				}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&out, "output", "o", "", "output file (created 0600), - for stdout")
	fl.BoolVar(&jsonOut, "json", false, "one JSON object per line")
	fl.IntVar(&bufferKB, "buffer-kb", 4096, "ring buffer per CPU in KiB")
	fl.BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when events were lost")
	fl.DurationVar(&duration, "duration", 0, "stop after this long")
	fl.Uint64Var(&count, "count", 0, "stop after this many events")
	fl.BoolVar(&perf, "perf", false, "read through perf rings instead of an ftrace instance")
	return c
}

// eventSource is what record reads from: an ftrace instance or perf rings.
type eventSource interface {
	Add(system, name string) (*userevents.Format, error)
	Start() error
	Run(ctx context.Context, fn func(*userevents.Recorded) error) error
	Close() error
	counts() (events, lost, bad uint64)
}

type ftraceSource struct{ *userevents.Recorder }

func (s ftraceSource) counts() (uint64, uint64, uint64) {
	st := s.Stats()
	return st.Events, st.Lost(), st.Bad
}

type perfSource struct{ *userevents.PerfReader }

func (s perfSource) counts() (uint64, uint64, uint64) {
	st := s.Stats()
	return st.Events, st.Lost, st.Bad
}

// perfPages is the ring size in pages for kb KiB: a power of two, at
// least one.
func perfPages(kb int) int {
	n := 1
	for n*4 < kb && n < 1<<20 {
		n *= 2
	}
	return n
}

// reportStale says which tracefs instances of killed recorders were
// removed.
func reportStale(e *env, r *userevents.Recorder) {
	for _, n := range r.RemovedStale() {
		fmt.Fprintf(e.stderr, "iotap: removed tracefs instance %s, left by a recorder that was killed\n", n)
	}
}
