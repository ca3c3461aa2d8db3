package main

import (
	"github.com/iotap/iotap/userevents"
	"github.com/spf13/cobra"
)

func newEventsStatusCmd(e *env) *cobra.Command {
	var jsonOut bool
	c := &cobra.Command{
		Use: "status",
		Example: `  iotap events status
  iotap events status --json | jq -r 'select(.enabled) | .name'`,
		Short: "Show registered user events and which tracers use them (user_events_status)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			st, err := userevents.ReadStatus(nil)
			if err != nil {
				return explain(err)
			}
			return st.Write(e.stdout, jsonOut)
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "one JSON object per event")
	return linuxOnly(c)
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
			defs, err := userevents.ReadDefinitions(nil)
			if err != nil {
				return explain(err)
			}
			return userevents.WriteDefinitions(e.stdout, defs, jsonOut)
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "one JSON object per event")
	return linuxOnly(c)
}
