package main

import "github.com/spf13/cobra"

// newUSBCmd is the `iotap usb` command group. Verbs are added as they land.
func newUSBCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{
		Use:   "usb",
		Short: "usb tracing (not yet implemented)",
	}
}
