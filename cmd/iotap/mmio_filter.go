package main

import "github.com/spf13/cobra"

func newMMIOFilterCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "filter", Short: "(not yet implemented)", Hidden: true}
}
