package main

import (
	"context"
	"fmt"
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
				_, err := e.stdout.Write(st.AppendNDJSON(b))
				return err
			}
			return st.WriteText(e.stdout)
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
			defs, err := userevents.ReadDefinitions(fs)
			if err != nil {
				return explain(err)
			}
			if !jsonOut {
				for i := range defs {
					fmt.Fprintf(e.stdout, "%s/%s\t%s\n", defs[i].System, defs[i].Event.Name, defs[i].Command())
				}
				return nil
			}
			b := userevents.AppendNDJSONInput(nil, "", userevents.FormatStatus, "")
			for i := range defs {
				b = defs[i].AppendNDJSON(b)
			}
			_, err = e.stdout.Write(b)
			return err
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "one JSON object per event")
	return c
}
