package main

import (
	"github.com/spf13/cobra"
)

func newPTCaptureCmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "capture", Short: "Record Intel PT per CPU (Intel CPUs with the intel_pt PMU)", Hidden: true}
}
