package main

import "github.com/spf13/cobra"

func newUSBReadCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "read", Short: "(not yet implemented)", Hidden: true}
}
