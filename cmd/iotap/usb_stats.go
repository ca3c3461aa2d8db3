package main

import "github.com/spf13/cobra"

func newUSBStatsCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "stats", Short: "(not yet implemented)", Hidden: true}
}
