package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/capture"
)

// goos is the system iotap runs on (a variable for the tests).
var goos = runtime.GOOS

// linuxOnly marks a command that captures or talks to the kernel: on
// systems other than Linux it exists (help and scripts see the same
// command tree) but says so in its summary and fails with ErrNotSupported
// before doing anything; iotap decodes there.
func linuxOnly(c *cobra.Command) *cobra.Command {
	if goos != "linux" {
		c.Short += " (Linux only)"
		c.PreRunE = func(c *cobra.Command, _ []string) error {
			return fmt.Errorf("%w: %s needs Linux; decode captures made there with 'iotap usb read', 'iotap mmio read', 'iotap timeline' and the other readers", capture.ErrNotSupported, c.CommandPath())
		}
	}
	return c
}
