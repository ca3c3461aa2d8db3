package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

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
	)
	c := &cobra.Command{
		Use:   "record NAME|'NAME FIELDS'... -o FILE",
		Short: "Record user events until interrupted",
		Long: `Record user events from the per-CPU binary ring buffers of a private ftrace
instance, decoded with each event's format file, until SIGINT (or --duration,
or --count events).

An argument with fields ('req u32 id; __rel_loc char[] path') is registered
first and kept registered while recording, so writers that start later (e.g.
'iotap events write req id=1 path=/x') are caught. A bare NAME must already
be registered.

Output: one line per event; with --json one object per line:
{"name":…,"ts":…,"cpu":…,"pid":…,"fields":{…}} (ts: trace clock in ns).
Lost events are counted (ring-buffer page flags and per-CPU overruns) and
reported; the exit status is 3 when any were lost, unless --allow-loss.`,
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
			r, err := userevents.NewRecorder(fs, bufferKB)
			if err != nil {
				return explain(err)
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
			f, closeOut, err := createOutput(e, out)
			if err != nil {
				return err
			}
			var w io.Writer = e.stdout
			if f != nil {
				w = f
			}
			bw := bufio.NewWriterSize(w, 64<<10)
			ctx, cancel := e.ctx, func() {}
			if duration > 0 {
				ctx, cancel = contextWithTimeout(e.ctx, duration)
			}
			defer cancel()
			var n uint64
			var line []byte
			if err := r.Start(); err != nil {
				closeOut()
				return explain(err)
			}
			fmt.Fprintf(e.stderr, "iotap: recording %d event(s); stop with Ctrl-C\n", len(targets))
			runErr := r.Run(ctx, func(rec *userevents.Recorded) error {
				line = line[:0]
				if jsonOut {
					line = userevents.AppendJSON(line, rec)
				} else {
					line = userevents.AppendText(line, rec)
				}
				line = append(line, '\n')
				if _, err := bw.Write(line); err != nil {
					return err
				}
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
			st := r.Stats()
			fmt.Fprintf(e.stderr, "iotap: recorded %d event(s), lost %d\n", st.Events, st.Lost())
			if st.Bad > 0 || st.Lost() > 0 {
				if !allowLoss {
					return dataLostError("events record: %d event(s) lost, %d undecodable (grow --buffer-kb; --allow-loss to accept)", st.Lost(), st.Bad)
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
	return c
}
