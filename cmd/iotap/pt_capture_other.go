//go:build !linux

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
)

func newPTCaptureCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "capture",
		Short: "Record Intel PT (Linux only)",
		RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("pt capture: %w: Intel PT capture needs Linux with the intel_pt PMU", intelpt.ErrNotSupported)
		},
	}
}
