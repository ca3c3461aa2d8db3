package main

import "github.com/spf13/cobra"

// newPTCmd is the `iotap pt` command group. Verbs are added as they land.
func newPTCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{
		Use:   "pt",
		Short: "pt tracing (not yet implemented)",
	}
}
