package main

import "github.com/spf13/cobra"

// newMMIOCmd is the `iotap mmio` command group. Verbs are added as they land.
func newMMIOCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{
		Use:   "mmio",
		Short: "mmio tracing (not yet implemented)",
	}
}
