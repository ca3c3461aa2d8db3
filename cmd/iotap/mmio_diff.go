package main

import "github.com/spf13/cobra"

func newMMIODiffCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "diff", Short: "(not yet implemented)", Hidden: true}
}
