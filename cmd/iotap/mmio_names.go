package main

import "github.com/spf13/cobra"

func newMMIONamesCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "names", Short: "(not yet implemented)", Hidden: true}
}
