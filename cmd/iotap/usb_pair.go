package main

import "github.com/spf13/cobra"

func newUSBPairCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "pair", Short: "(not yet implemented)", Hidden: true}
}
