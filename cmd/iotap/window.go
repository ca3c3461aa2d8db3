package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/userevents"
)

// withWindow gives a reader command --from/--to: its trace arguments (and
// --pt) are replaced by their cut of the window (cut.OpenWindow), which
// the command then reads as it reads any trace.
func withWindow(e *env, c *cobra.Command) *cobra.Command {
	var from, to string
	fl := c.Flags()
	fl.StringVar(&from, "from", "", "read only the records at or after `TIME`: seconds from the trace's first record (1.5, 200ms), @T on its clock, RFC 3339, or mark:NAME (see 'iotap cut --help'); the trace is cut with 'iotap cut' (seeking with its index) and the cut is read")
	fl.StringVar(&to, "to", "", "read only the records before `TIME` (same forms as --from; +D: D after --from)")
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		spec, err := timerange.ParseSpec(from, to)
		if err != nil {
			return usageErrorf("%s: %v", cmd.CommandPath(), err)
		}
		if !spec.Set() {
			return run(cmd, args)
		}
		warn := func(s string) { fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s) }
		var ws []*cut.Windowed
		defer func() {
			for _, w := range ws {
				w.Close()
			}
		}()
		open := func(p string) (string, error) {
			w, err := cut.OpenWindow(e.ctx, p, spec, warn)
			if we := (*cut.WindowError)(nil); errors.As(err, &we) {
				return "", usageErrorf("%s: %v", cmd.CommandPath(), err)
			} else if err != nil {
				return "", err
			}
			ws = append(ws, w)
			return w.Path, nil
		}
		args = slices.Clone(args)
		for i := range args {
			if args[i], err = open(args[i]); err != nil {
				return err
			}
		}
		if f := fl.Lookup("pt"); f != nil && f.Value.String() != "" {
			p, err := open(f.Value.String())
			if err != nil {
				return err
			}
			f.Value.Set(p)
		}
		err = run(cmd, args)
		for _, w := range ws {
			for _, t := range w.Truncated() {
				if f := fl.Lookup("allow-loss"); err == nil && (f == nil || f.Value.String() != "true") {
					err = dataLostError("%s ends inside a record (offset %d): the window's cut leaves it out, 1 event lost (--allow-loss to accept)", t.Input, t.Result.TruncatedAt)
				}
			}
		}
		return err
	}
	return c
}

// eventsWindow adds --from/--to of events read to keep
// (userevents.PerfDataWindow).
func eventsWindow(e *env, from, to, path string, keep func(*userevents.Recorded) bool) (func(*userevents.Recorded) bool, error) {
	spec, err := timerange.ParseSpec(from, to)
	if err != nil || !spec.Set() {
		if err != nil {
			err = usageErrorf("events read: %v", err)
		}
		return keep, err
	}
	win, err := userevents.PerfDataWindow(e.ctx, path, spec)
	if err != nil {
		return nil, usageErrorf("events read: %v", err)
	}
	return func(r *userevents.Recorded) bool {
		return win.Contains(int64(r.TS)) && (keep == nil || keep(r))
	}, nil
}

// windowFlags adds --from (described by fromHelp) and --to to c; the
// function returned parses them.
func windowFlags(c *cobra.Command, fromHelp string) func() (timerange.Spec, error) {
	var from, to string
	c.Flags().StringVar(&from, "from", "", fromHelp)
	c.Flags().StringVar(&to, "to", "", "only the records before `TIME` (same forms as --from; +D: D after --from)")
	return func() (timerange.Spec, error) {
		spec, err := timerange.ParseSpec(from, to)
		if err != nil {
			return spec, usageErrorf("%s: %v", c.CommandPath(), err)
		}
		return spec, nil
	}
}
