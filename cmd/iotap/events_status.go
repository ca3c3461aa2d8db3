package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/iotap/iotap/userevents"
	"github.com/spf13/cobra"
)

func contextWithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

func newEventsStatusCmd(e *env) *cobra.Command {
	var jsonOut bool
	c := &cobra.Command{
		Use: "status",
		Example: `  iotap events status
  iotap events status --json | jq -r 'select(.enabled) | .name'`,
		Short: "Show registered user events and which tracers use them (user_events_status)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			fs, err := eventsFS()
			if err != nil {
				return err
			}
			st, err := userevents.ReadStatus(fs)
			if err != nil {
				return explain(err)
			}
			if jsonOut {
				b := userevents.AppendNDJSONInput(nil, "", userevents.FormatStatus, "")
				for i := range st.Events {
					b = userevents.AppendStatusNDJSON(b, &st.Events[i])
				}
				_, err := e.stdout.Write(b)
				return err
			}
			for _, ev := range st.Events {
				used := "-"
				if len(ev.UsedBy) > 0 {
					used = strings.Join(ev.UsedBy, ",")
				}
				fmt.Fprintf(e.stdout, "%-40s used by: %s\n", ev.Name, used)
			}
			fmt.Fprintf(e.stdout, "active %d, busy %d\n", st.Active, st.Busy)
			return nil
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "one JSON object per event")
	return c
}

func newEventsListCmd(e *env) *cobra.Command {
	var jsonOut bool
	c := &cobra.Command{
		Use: "list",
		Example: `  iotap events list
  iotap events list --json`,
		Short: "List registered user events with their fields",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			fs, err := eventsFS()
			if err != nil {
				return err
			}
			st, err := userevents.ReadStatus(fs)
			if err != nil {
				return explain(err)
			}
			var b []byte
			if jsonOut {
				b = userevents.AppendNDJSONInput(b, "", userevents.FormatStatus, "")
			}
			for i := range st.Events {
				ev := &st.Events[i]
				sys := userevents.System
				if strings.Contains(ev.Name, ".") {
					sys = userevents.MultiSystem
				}
				var schema *userevents.Schema
				if f, err := userevents.ReadFormat(fs, sys, ev.Name); err == nil {
					if s, err := userevents.SchemaOf(f, strings.SplitN(ev.Name, ".", 2)[0]); err == nil {
						schema = s
					}
				}
				if jsonOut {
					b = userevents.AppendDefinitionNDJSON(b, sys, ev, schema)
					continue
				}
				cmd := ev.Name + " (format unreadable)"
				if schema != nil {
					cmd = schema.Command()
				}
				fmt.Fprintf(e.stdout, "%s/%s\t%s\n", sys, ev.Name, cmd)
			}
			_, err = e.stdout.Write(b)
			return err
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "one JSON object per event")
	return c
}
