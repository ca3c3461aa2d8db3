package main

import (
	"github.com/spf13/cobra"
)

// newPTCmd is the `iotap pt` command group (Intel Processor Trace).
func newPTCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "pt",
		Short: "Intel Processor Trace: dump and summarise PT packets, capture with perf (intel_pt)",
		Long: `Intel Processor Trace (PT) tools.

  iotap pt dump FILE      list packets like libipt's ptdump (same text for the same trace)
  iotap pt stats FILE     packets by kind, PSB spacing, overflows, time span
  iotap pt capture -o DIR record PT per CPU with perf_event_open (Intel CPUs only)

FILE is a raw PT stream (as written by 'iotap pt capture', perf's AUX area, or
libipt's pttc) or a perf.data file from 'perf record -e intel_pt//': the
format is detected from the content (perf.data starts with PERFILE2).
Decoding works on any machine; capture needs an Intel CPU with the intel_pt PMU.`,
	}
	c.AddCommand(withWindow(e, newPTDumpCmd(e)), withWindow(e, newPTStatsCmd(e)), newPTCaptureCmd(e), withWindow(e, newPTFlowCmd(e)), withWindow(e, newPTCallsCmd(e)))
	return c
}
