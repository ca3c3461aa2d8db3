package main

import "github.com/spf13/cobra"

// newUSBCmd is the `iotap usb` command group.
func newUSBCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "usb",
		Short: "Capture, read, convert and analyse USB traffic (usbmon)",
	}
	c.AddCommand(
		newUSBCaptureCmd(e), // usb_capture.go
		newUSBConvertCmd(e), // usb_convert.go
		newUSBReadCmd(e),    // usb_read.go
		newUSBStatsCmd(e),   // usb_stats.go
		newUSBPairCmd(e),    // usb_pair.go
	)
	return c
}
