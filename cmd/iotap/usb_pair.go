package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
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
			return done(runUSBPair(e, &o, args[0], unmatched))
		},
	}
	o.register(c.Flags(), true)
	c.Flags().Uint64VarP(&count, "count", "c", 0, "stop after `N` lines (transfers), like tshark -c (0: all)")
	c.Flags().BoolVar(&unmatched, "unmatched", false, "also list the submissions that never completed (superseded by a reuse of their URB id, or still in flight at the end)")
	return c
}

func runUSBPair(e *env, o *usbAnOptions, path string, unmatched bool) error {
	in, err := openUSBAnInput(e, o, path)
	if err != nil {
		return err
	}
	defer in.close()
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	var line []byte
	if o.json {
		if _, err := w.Write(usb.AppendInput(nil, path, in.pl.Reader.Format())); err != nil {
			return err
		}
	}
	readErr := in.pl.EachTransfer(e.ctx, unmatched, func(t *usb.Transfer) error {
		switch {
		case t.Unmatched != "" && o.json:
			line = usb.AppendUnmatched(line[:0], t.Unmatched, t.Key, t.Submission, in.pl.Identities)
		case t.Unmatched != "":
			line = usb.AppendUnmatchedText(line[:0], t.Unmatched, t.Key, t.Submission, in.pl.Identities)
		case o.json:
			line = usb.AppendPair(line[:0], t.Pair, t.Event, in.pl.Identities)
		default:
			line = usb.AppendPairText(line[:0], t.Pair, t.Event, in.pl.Identities)
		}
		_, err := w.Write(line)
		return err
	})
	c := in.pl.Pairer.Counts()
	if o.json && (readErr == nil || errors.Is(readErr, usbmon.ErrTruncated)) {
		if _, err := w.Write(usb.AppendPairSummary(line[:0], c)); err != nil && readErr == nil {
			readErr = err
		}
	}
	if err := w.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	if !o.json {
		fmt.Fprintf(e.stderr, "%d transfers paired; %d submissions unmatched (%d in flight at the end, %d superseded); %d orphan completions; %d submission errors\n",
			c.Pairs, c.Unmatched, c.InFlight, c.Superseded, c.Orphans, c.SubmitErrors)
	}
	return in.finish(readErr)
}
