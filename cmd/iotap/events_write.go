package main

import (
	"errors"
	"fmt"

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
			req := userevents.RegisterRequest{Command: args[0], NoPersist: noPersist, MultiFormat: multi}
			if err := req.Check(); err != nil {
				return usageErrorf("%v", err)
			}
			reg, err := req.Register(nil)
			if err != nil {
				return explain(err)
			}
			fmt.Fprintln(e.stdout, reg)
			return nil
		},
	}
	c.Flags().BoolVar(&multi, "multi-format", false, "allow other formats under the same name (Linux 6.10+)")
	c.Flags().BoolVar(&noPersist, "no-persist", false, "do not ask for persistence (the event vanishes when this command exits unless something else uses it)")
	return linuxOnly(c)
}

func newEventsWriteCmd(e *env) *cobra.Command {
	var req userevents.WriteRequest
	var persist, requireEnabled bool
	c := &cobra.Command{
		Use: "write [--register 'NAME FIELDS'] NAME field=value...",
		Example: `  iotap events write --register 'iotap_marker char[64] text' iotap_marker text=start
  iotap events write --require-enabled myapp_req id=7 bytes=4096
  iotap events write --eventheader --level 4 --keyword 1 MyProvider:Request status:u32=404 path=/x`,
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
--require-enabled).

With --eventheader, NAME is PROVIDER:EVENT and the event is written in
LinuxTracepoints' self-describing EventHeader format on the tracepoint
PROVIDER_L<level>K<keyword>; fields are name[:type]=value with types u8..u64,
s8..s64, x32, x64, bool, errno, str, bin (hex bytes); untyped integers are s64,
anything else a string.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			req.Name, req.Args = args[0], args[1:]
			if persist {
				req.Flags = userevents.Persist
			}
			err := req.Write(nil) // checks req first: bad arguments are *ArgError
			var ae *userevents.ArgError
			if errors.As(err, &ae) && errors.Is(err, userevents.ErrNotFound) {
				return usageErrorf("event %s is not registered: give its fields with --register '%s FIELDS'", req.Name, req.Name)
			} else if ae != nil {
				return usageErrorf("%v", err)
			}
			return writeResult(e, req.Tracepoint(), requireEnabled, err)
		},
	}
	c.Flags().StringVar(&req.Register, "register", "", "the event's fields, 'NAME FIELDS', registered if needed")
	c.Flags().BoolVar(&persist, "persist", false, "register with the persist flag (needs CAP_PERFMON)")
	c.Flags().BoolVar(&requireEnabled, "require-enabled", false, "fail when nothing records the event")
	c.Flags().BoolVar(&req.EventHeader, "eventheader", false, "write PROVIDER:EVENT as an EventHeader (LinuxTracepoints) event")
	c.Flags().Uint8Var(&req.Level, "level", 4, "EventHeader level (1 critical .. 5 verbose)")
	c.Flags().Uint64Var(&req.Keyword, "keyword", 1, "EventHeader keyword bits")
	return linuxOnly(c)
}

// writeResult reports a write that nothing recorded: an error with
// --require-enabled, else a note (exit 0).
func writeResult(e *env, name string, requireEnabled bool, err error) error {
	switch {
	case err == nil:
		return nil
	case err == userevents.ErrNotEnabled && requireEnabled:
		return fmt.Errorf("events write: %s is not enabled: nothing records it", name)
	case err == userevents.ErrNotEnabled:
		fmt.Fprintf(e.stderr, "iotap: events write: %s is not enabled, nothing written\n", name)
		return nil
	case errors.Is(err, userevents.ErrNotEnabled) && !requireEnabled:
		fmt.Fprintf(e.stderr, "iotap: events write: %s was disabled, nothing written\n", name)
		return nil
	}
	return explain(err)
}

func newEventsDeleteCmd(e *env) *cobra.Command {
	return linuxOnly(&cobra.Command{
		Use:     "delete NAME",
		Example: `  sudo iotap events delete myapp_req`,
		Short:   "Delete a user event nothing uses any more (e.g. a persistent one)",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := userevents.CheckName(args[0]); err != nil {
				return usageErrorf("%v", err)
			}
			if err := userevents.Delete(nil, args[0]); err != nil {
				return explain(err)
			}
			fmt.Fprintf(e.stdout, "deleted %s\n", args[0])
			return nil
		},
	})
}
