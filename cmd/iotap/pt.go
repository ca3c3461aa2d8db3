package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/intelpt"
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

// ptLoad reads FILE ("-" for stdin, FILE:FROM[-TO] a byte range) and
// splits it into its streams (intelpt.ParseInput).
func ptLoad(e *env, path string) (*intelpt.Input, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return nil, fmt.Errorf("pt: %s is a directory (give a trace file)", path)
		}
		b, err = intelpt.ReadFile(path)
		if re := (*intelpt.RangeError)(nil); errors.As(err, &re) {
			return nil, usageErrorf("pt: %v", err)
		}
	}
	if err != nil {
		return nil, detect.ReadError(path, err)
	}
	tr, err := intelpt.ParseInput(b)
	switch {
	case errors.Is(err, intelpt.ErrNoPSB):
		// Not PT at all: say what it is (detect), or why not.
		if _, derr := detect.Expect(b[:min(len(b), detect.HeadSize)], len(b) <= detect.HeadSize, detect.PT); derr != nil {
			err = derr
		}
		return nil, fmt.Errorf("pt: %s: %w", path, err)
	case err != nil:
		return tr, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}
