package main

import (
	"context"
	"encoding/json"
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
				for _, ev := range st.Events {
					b, _ := json.Marshal(map[string]any{"name": ev.Name, "used_by": nonNil(ev.UsedBy)})
					fmt.Fprintf(e.stdout, "%s\n", b)
				}
				return nil
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
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
			for _, ev := range st.Events {
				sys := userevents.System
				if strings.Contains(ev.Name, ".") {
					sys = userevents.MultiSystem
				}
				cmd := ev.Name + " (format unreadable)"
				var fields []map[string]any
				if f, err := userevents.ReadFormat(fs, sys, ev.Name); err == nil {
					if s, err := schemaFromFormat(f, strings.SplitN(ev.Name, ".", 2)[0]); err == nil {
						cmd = s.Command()
						for _, ff := range s.Fields {
							fields = append(fields, map[string]any{"name": ff.Name, "type": ff.Type, "offset": ff.Offset, "size": ff.Size})
						}
					}
				}
				if jsonOut {
					b, _ := json.Marshal(map[string]any{"name": ev.Name, "system": sys, "command": cmd, "fields": fields, "used_by": nonNil(ev.UsedBy)})
					fmt.Fprintf(e.stdout, "%s\n", b)
					continue
				}
				fmt.Fprintf(e.stdout, "%s/%s\t%s\n", sys, ev.Name, cmd)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "one JSON object per event")
	return c
}
