package main

import "github.com/spf13/cobra"

func newMMIOReplayCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "replay", Short: "(not yet implemented)", Hidden: true}
}
