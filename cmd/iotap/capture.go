package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/export"
)

func newCaptureCmd(e *env) *cobra.Command {
	var (
		a         capture.Args
		allowLoss lossFlag
		parquet   string
	)
	c := &cobra.Command{
		Use: "capture [--usb] [--mmio [--bind PCI]] [--events NAME|'NAME FIELDS']... -o DIR [-- COMMAND...]",
		Example: `  sudo iotap capture --usb --mmio --bind 0000:00:03.0 -o cap/ -- modprobe e1000
  sudo iotap capture --usb --bus 1 --events 'iotap_marker char[64] text' --duration 30s -o cap/
  iotap report cap/ -o cap.html -o cap.pftrace`,
		Short: "Capture several sources at once, with what is needed to put them on one clock",
		Long: `capture records USB (usbmon, all buses or --bus), MMIO (mmiotrace; --bind
unbinds the PCI device first and binds it again while tracing) and user_events
(--events, repeatable; 'NAME FIELDS' registers the event) together into DIR:

  usb.pcapng      usbmon events (wall clock)
  mmio.log        the mmiotrace log (ftrace clock)
  events.ndjson   the user events, one JSON object per line (trace clock)
  clocks.json     per source, the offset onto CLOCK_MONOTONIC

The offsets come from markers written to the sources when they all run, with
CLOCK_MONOTONIC read around each: a trace_marker write that lands in the
mmiotrace log, the user event iotap_marker (its 'mono' field), and for usbmon,
whose stamps are the wall clock, CLOCK_REALTIME read against CLOCK_MONOTONIC.
'iotap timeline DIR/*' and 'iotap report DIR -o FILE.pftrace' use clocks.json.

The capture runs COMMAND (after --) and stops when it exits; with --mmio and
--bind but no command, once the device is bound; otherwise until --duration
or Ctrl-C. Files are created 0600. Exit status 3 when a source lost events,
unless --allow-loss.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				command, args = args[at:], args[:at]
			}
			if len(args) > 0 {
				return usageErrorf("capture: unexpected argument %q (put the command after --)", args[0])
			}
			opt, err := a.Options()
			if err != nil {
				return usageErrorf("capture: %v", err)
			}
			opt.Command, opt.Stdout, opt.Stderr = command, e.stdout, e.stderr
			opt.Logf = func(format string, args ...any) { fmt.Fprintf(e.stderr, "iotap: "+format+"\n", args...) }
			return runCapture(e, opt, parquet, allowLoss)
		},
	}
	f := c.Flags()
	f.StringVarP(&a.Dir, "output", "o", "", "directory to write (created 0700; must not exist or be empty)")
	f.BoolVar(&a.USB, "usb", false, "capture USB with usbmon")
	f.IntVar(&a.Bus, "bus", 0, "USB bus to capture (0: all)")
	f.BoolVar(&a.MMIO, "mmio", false, "capture MMIO with mmiotrace")
	f.StringVar(&a.Bind, "bind", "", "PCI device (DDDD:BB:DD.F) to unbind before and bind while tracing MMIO")
	f.StringArrayVar(&a.Events, "events", nil, "user event to record: NAME, or 'NAME FIELDS' to register it (repeatable)")
	f.DurationVar(&a.Duration, "duration", 0, "stop after this long (0: at the end of the command, or on Ctrl-C)")
	f.IntVar(&a.BufferKB, "buffer-kb", 0, "per-CPU ring buffer of the user events instance (0: kernel default)")
	allowLoss.add(f, "exit 0 even when a source lost events")
	f.StringVar(&parquet, "parquet", "", "when the capture ends, export it as Parquet tables under `DIR` (as iotap export, identity of this system)")
	return linuxOnly(c)
}

// runCapture runs the capture session and, with --parquet, exports it
// (export.Capture).
func runCapture(e *env, opt capture.Options, parquet string, allowLoss lossFlag) error {
	res, err := export.Capture(e.ctx, opt, export.Options{Dir: parquet, IotapVersion: version})
	var nf *capture.EventNotFoundError
	if errors.As(err, &nf) {
		return usageErrorf("capture: --events %s: %v (register it, or give its fields: --events 'NAME FIELDS')", nf.Name, nf.Err)
	}
	if res == nil {
		return err
	}
	fmt.Fprintf(e.stdout, "captured into %s (clocks in %s)\n", opt.Dir, filepath.Join(opt.Dir, capture.ClocksFile))
	if err != nil {
		return err
	}
	for _, r := range res.Rows {
		fmt.Fprintf(e.stderr, "iotap: capture: exported %s: %d records to %s\n", r.SourceFile, r.Records, parquet)
	}
	if len(res.Loss) == 0 {
		return nil
	}
	return allowLoss.end(e, "capture: "+strings.Join(res.Loss, "; "), " (use --allow-loss to accept)")
}
