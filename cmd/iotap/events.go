package main

import (
	"errors"
	"fmt"

	"github.com/iotap/iotap/userevents"
	"github.com/spf13/cobra"
)

// newEventsCmd is the `iotap events` command group (user_events).
func newEventsCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "events",
		Short: "Register, write, record and inspect user_events (user-space tracepoints)",
		Long: `Linux user_events (CONFIG_USER_EVENTS, Linux 6.4+) are tracepoints defined by user
programs. An event is a name and fields, e.g. 'req u32 id; __rel_loc char[] path'.

Field types: u8 s8 u16 s16 u32 s32 u64 s64 int short char (and unsigned ...),
char[N] (N<=1024), __rel_loc char[] (a string of any length), struct NAME field SIZE.
long is refused (its size differs between user and kernel).`,
	}
	c.AddCommand(
		newEventsRegisterCmd(e), // events_write.go
		newEventsWriteCmd(e),    // events_write.go
		newEventsDeleteCmd(e),   // events_write.go
		newEventsRecordCmd(e),   // events_record.go
		newEventsStatusCmd(e),   // events_status.go
		newEventsListCmd(e),     // events_status.go
		newEventsReadCmd(e),     // events_read.go
	)
	return c
}

// explain adds the remedy to common user_events errors, once: an error
// whose hint already says what the kernel lacks (userevents.Error.Hint)
// gets only the pointer to 'iotap doctor'.
func explain(err error) error {
	switch {
	case errors.Is(err, userevents.ErrNotSupported):
		if ue := (*userevents.Error)(nil); errors.As(err, &ue) && ue.Hint != "" {
			return fmt.Errorf("%w (try 'iotap doctor')", err)
		}
		return fmt.Errorf("%w (is this kernel built with CONFIG_USER_EVENTS? try 'iotap doctor')", err)
	case errors.Is(err, userevents.ErrPermission):
		return fmt.Errorf("%w (run as root)", err)
	}
	return err
}
