//go:build !linux

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usbmon"
	"github.com/iotap/iotap/userevents"
)

// On systems other than Linux iotap decodes and converts traces; the
// commands that capture or talk to the kernel exist (so that help and
// scripts see the same command tree) but fail with ErrNotSupported.

func notOnThisOS(use, short, what string, sentinel error) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short + " (Linux only)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("%w: %s needs Linux; decode captures made there with 'iotap usb read', 'iotap mmio read', 'iotap timeline'...", sentinel, what)
		},
	}
}

func newUSBCaptureCmd(*env) *cobra.Command {
	return notOnThisOS("capture", "Capture USB traffic with usbmon", "usb capture (usbmon)", usbmon.ErrNotSupported)
}

func newMMIOCaptureCmd(*env) *cobra.Command {
	return notOnThisOS("capture", "Capture MMIO accesses with mmiotrace", "mmio capture (mmiotrace)", mmiotrace.ErrNotSupported)
}

func newEventsRegisterCmd(*env) *cobra.Command {
	return notOnThisOS("register", "Register a user event", "events register (user_events)", userevents.ErrNotSupported)
}

func newEventsWriteCmd(*env) *cobra.Command {
	return notOnThisOS("write", "Write a user event", "events write (user_events)", userevents.ErrNotSupported)
}

func newEventsDeleteCmd(*env) *cobra.Command {
	return notOnThisOS("delete", "Delete a user event", "events delete (user_events)", userevents.ErrNotSupported)
}

func newEventsRecordCmd(*env) *cobra.Command {
	return notOnThisOS("record", "Record user events", "events record (user_events)", userevents.ErrNotSupported)
}

func mmioOpenBARTarget(dev mmiotrace.PCIAddr, force bool) (mmioBARTarget, error) {
	return nil, fmt.Errorf("%w: writing to a PCI BAR needs Linux", mmiotrace.ErrNotSupported)
}
