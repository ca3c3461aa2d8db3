package main

import "github.com/spf13/cobra"

// newMMIOCmd is the `iotap mmio` command group.
func newMMIOCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "mmio",
		Short: "Capture, read, filter, name and replay MMIO accesses (mmiotrace)",
	}
	c.AddCommand(
		newMMIOCaptureCmd(e),              // mmio_capture.go
		withWindow(e, newMMIOReadCmd(e)),  // mmio_read.go
		newMMIOFilterCmd(e),               // mmio_filter.go
		newMMIOReplayCmd(e),               // mmio_replay.go
		withWindow(e, newMMIOStatsCmd(e)), // mmio_stats.go
		withWindow(e, newMMIODiffCmd(e)),  // mmio_diff.go
		withWindow(e, newMMIONamesCmd(e)), // mmio_names.go
	)
	return c
}

// mmioIn is lossFlag.mmio for the log at path: the messages name it
// ("mmio: FILE: the log is cut: ...").
func (l lossFlag) mmioIn(e *env, path string, msgs []string) error {
	return l.check(e, "mmio: "+path+": ", msgs, "--allow-loss to accept")
}
