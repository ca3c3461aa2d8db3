//go:build linux

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/iotap/iotap/userevents"
	"github.com/spf13/cobra"
)

func newEventsRegisterCmd(e *env) *cobra.Command {
	var multi, noPersist bool
	c := &cobra.Command{
		Use: "register 'NAME FIELDS'",
		Example: `  sudo iotap events register 'myapp_req u32 id; u64 bytes'
  sudo iotap events register --no-persist 'iotap_marker char[64] text'`,
		Short: "Register a persistent user event",
		Long: `Register an event, e.g. iotap events register 'req u32 id; char[16] tag'.

The event is registered with the persist flag, so it outlives this command (this
needs CAP_PERFMON or root). Remove it with 'iotap events delete NAME'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := userevents.ParseCommand(args[0])
			if err != nil {
				return usageErrorf("%v", err)
			}
			fs, err := eventsFS()
			if err != nil {
				return err
			}
			p, err := userevents.OpenFS(fs)
			if err != nil {
				return explain(err)
			}
			defer p.Close()
			var flags userevents.Flags
			if !noPersist {
				flags |= userevents.Persist
			}
			if multi {
				flags |= userevents.MultiFormat
			}
			ev, err := p.RegisterSchema(s, flags)
			if err != nil {
				return explain(err)
			}
			sys, name, err := userevents.Tracepoint(fs, s, ev.Flags())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "registered %s as %s/%s", s.Command(), sys, name)
			if ev.Flags()&userevents.Persist == 0 {
				fmt.Fprint(e.stdout, " (not persistent: gone when nothing uses it)")
			}
			fmt.Fprintln(e.stdout)
			return nil
		},
	}
	c.Flags().BoolVar(&multi, "multi-format", false, "allow other formats under the same name (Linux 6.10+)")
	c.Flags().BoolVar(&noPersist, "no-persist", false, "do not ask for persistence (the event vanishes when this command exits unless something else uses it)")
	return c
}

func newEventsWriteCmd(e *env) *cobra.Command {
	var register string
	var persist, requireEnabled bool
	c := &cobra.Command{
		Use: "write [--register 'NAME FIELDS'] NAME field=value...",
		Example: `  iotap events write --register 'iotap_marker char[64] text' iotap_marker text=start
  iotap events write --require-enabled myapp_req id=7 bytes=4096`,
		Short: "Write one user event (for shell scripts)",
		Long: `Register NAME if needed, write one event with the given field values, and exit.

Fields not given are zero (empty strings). Integers take decimal, 0x hex or 0
octal; char[N] and __rel_loc char[] take text; struct fields take hex bytes.

An event exists only while something references it, so for the write to be
recorded the event must be enabled when this command runs: start
'iotap events record NAME FIELDS ...' first (it registers the event, keeps it
registered and enables it), or register it with 'iotap events register'
(persistent) and enable it with any tracer. When nothing records the event,
nothing is written and the command says so on stderr (exit 0, or 1 with
--require-enabled).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if !userevents.ValidName(name) {
				return usageErrorf("bad event name %q", name)
			}
			var s *userevents.Schema
			var err error
			if register != "" {
				if s, err = userevents.ParseCommand(register); err != nil {
					return usageErrorf("--register: %v", err)
				}
				if s.Name != name {
					return usageErrorf("--register names %q, not %q", s.Name, name)
				}
			}
			var vals []any
			if s != nil {
				if vals, err = parseFieldValues(s, args[1:]); err != nil {
					return err
				}
			}
			fs, err := eventsFS()
			if err != nil {
				return err
			}
			if s == nil {
				f, err := userevents.ReadFormat(fs, userevents.System, name)
				if err != nil {
					if errors.Is(err, userevents.ErrNotFound) {
						return usageErrorf("event %s is not registered: give its fields with --register '%s FIELDS'", name, name)
					}
					return explain(err)
				}
				if s, err = schemaFromFormat(f, name); err != nil {
					return err
				}
				if vals, err = parseFieldValues(s, args[1:]); err != nil {
					return err
				}
			}
			p, err := userevents.OpenFS(fs)
			if err != nil {
				return explain(err)
			}
			defer p.Close()
			var flags userevents.Flags
			if persist {
				flags = userevents.Persist
			}
			ev, err := p.RegisterSchema(s, flags)
			if err != nil {
				return explain(err)
			}
			if !ev.Enabled() {
				if requireEnabled {
					return fmt.Errorf("events write: %s is not enabled: nothing records it", name)
				}
				fmt.Fprintf(e.stderr, "iotap: events write: %s is not enabled, nothing written\n", name)
				return nil
			}
			if err := ev.Write(vals...); err != nil {
				if errors.Is(err, userevents.ErrNotEnabled) && !requireEnabled {
					fmt.Fprintf(e.stderr, "iotap: events write: %s was disabled, nothing written\n", name)
					return nil
				}
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&register, "register", "", "the event's fields, 'NAME FIELDS', registered if needed")
	c.Flags().BoolVar(&persist, "persist", false, "register with the persist flag (needs CAP_PERFMON)")
	c.Flags().BoolVar(&requireEnabled, "require-enabled", false, "fail when nothing records the event")
	return c
}

// parseFieldValues turns field=value arguments into one value per field.
func parseFieldValues(s *userevents.Schema, args []string) ([]any, error) {
	vals, err := s.ParseValues(args)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return vals, nil
}

func newEventsDeleteCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Example: `  sudo iotap events delete myapp_req`,
		Short:   "Delete a user event nothing uses any more (e.g. a persistent one)",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !userevents.ValidName(args[0]) {
				return usageErrorf("bad event name %q", args[0])
			}
			fs, err := eventsFS()
			if err != nil {
				return err
			}
			// A process that just exited or exec'd releases its
			// registrations after an RCU grace period: retry a busy
			// delete for a second before giving up.
			err = userevents.DeleteFS(fs, args[0])
			for i := 0; i < 50 && errors.Is(err, userevents.ErrBusy); i++ {
				time.Sleep(20 * time.Millisecond)
				err = userevents.DeleteFS(fs, args[0])
			}
			if err != nil {
				return explain(err)
			}
			fmt.Fprintf(e.stdout, "deleted %s\n", args[0])
			return nil
		},
	}
}
