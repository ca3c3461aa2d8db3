package main

import "github.com/spf13/cobra"

func newUSBConvertCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "convert", Short: "(not yet implemented)", Hidden: true}
}
