package main

import "github.com/spf13/cobra"

func newUSBCaptureCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "capture", Short: "(not yet implemented)", Hidden: true}
}
