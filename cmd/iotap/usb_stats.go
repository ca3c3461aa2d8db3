package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/report"
	"github.com/iotap/iotap/usbmon"
)

func newUSBStatsCmd(e *env) *cobra.Command {
	var o usbAnOptions
	c := &cobra.Command{
		Use:   "stats [flags] FILE",
		Short: "Per device and endpoint counts, bytes, rates, latency percentiles, errors and stalls",
		Long: `Summarise a usbmon capture per device and endpoint: submissions, completions,
bytes moved (actual lengths of successful completions), rate over the
endpoint's active time, latency from submission to completion
(min/median/p99/max), errors by name (EPROTO, ETIMEDOUT, ...), stalls (EPIPE)
and cancellations (ENOENT, ECONNRESET, ESHUTDOWN, ENODEV: URBs unlinked by
their driver or killed by a disconnect).

Latency percentiles come from a log-linear histogram: exact below 64 µs,
within 3.2% above; min and max are exact. Memory does not grow with the
length of the capture.

Pairing: URB ids are kernel pointers that are reused, so a completion pairs
with the most recent unmatched submission of the same id, bus, device and
endpoint. Submissions without a completion (in flight at the end, or whose
completion was lost) and completions without a submission (the capture
started while they were in flight) are counted, not guessed.

The same filters as 'iotap usb read' select the events counted.`,
		Example: `  iotap usb stats capture.pcapng
  iotap usb stats --json --vidpid 0781:5583 0u.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUSBStats(e, &o, args[0])
		},
	}
	o.register(c.Flags(), true)
	c.Flags().Uint64VarP(&o.Limit, "count", "c", 0, "count only the first `N` events (after the filters), like tshark -c (0: all)")
	return c
}

func runUSBStats(e *env, o *usbAnOptions, path string) error {
	o.summary = true
	in, err := openUSBAnInput(e, o, path)
	if err != nil {
		return err
	}
	defer in.Close()
	st, readErr := in.Stats(e.ctx)
	if readErr != nil && !errors.Is(readErr, usbmon.ErrTruncated) {
		return readErr
	}
	if err := report.WriteUSBStats(e.stdout, st, in.Pipeline, path, o.json); err != nil {
		return err
	}
	return usbFinish(e, o, path, in.Pipeline, readErr)
}
