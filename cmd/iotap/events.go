package main

import "github.com/spf13/cobra"

// newEventsCmd is the `iotap events` command group. Verbs are added as they land.
func newEventsCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{
		Use:   "events",
		Short: "events tracing (not yet implemented)",
	}
}
