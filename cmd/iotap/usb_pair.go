package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/usb"
)

func newUSBPairCmd(e *env) *cobra.Command {
	var o usbAnOptions
	var unmatched bool
	var count uint64
	c := &cobra.Command{
		Use:   "pair [flags] FILE",
		Short: "List transfers: each completion with its submission and the latency between them",
		Long: `Print one line per transfer: the completion paired with its submission, the
event numbers of both (as 'iotap usb read' numbers them), urb id, address,
status, requested and actual length, latency and, for control transfers, the
request.

URB ids are kernel pointers that are reused: a completion pairs with the most
recent unmatched submission of the same id, bus, device and endpoint. The
counts of unmatched submissions and orphan completions are printed on stderr
at the end (and as a final "summary" object with --json). --unmatched lists
the submissions that never completed: "superseded" when their URB id was
submitted again before a completion (the completion was lost), "in_flight"
when the capture ended first (a hung transfer shows up here).

The same filters as 'iotap usb read' select the transfers printed.`,
		Example: `  iotap usb pair capture.pcapng
  iotap usb pair --json --type bulk 0u.txt | jq .latency_ns`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			done := e.limitStdout(count)
			return done(runUSBJob(e, &o, args[0], func(pl *usb.Pipeline) error {
				readErr := pl.WriteTransfers(e.ctx, e.stdout, usb.TransferFormat{JSON: o.json, File: args[0], Unmatched: unmatched})
				if !o.json {
					fmt.Fprintln(e.stderr, pl.Pairer.Counts().Summary())
				}
				return readErr
			}))
		},
	}
	o.register(c.Flags(), true)
	c.Flags().Uint64VarP(&count, "count", "c", 0, "stop after `N` lines (transfers), like tshark -c (0: all)")
	c.Flags().BoolVar(&unmatched, "unmatched", false, "also list the submissions that never completed (superseded by a reuse of their URB id, or still in flight at the end)")
	return c
}
