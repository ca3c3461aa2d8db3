package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/export"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/userevents"
)

type captureOptions struct {
	out       string
	usb       bool
	bus       int
	mmio      bool
	bind      string
	events    []string
	duration  time.Duration
	bufferKB  int
	allowLoss bool
	parquet   string
}

func newCaptureCmd(e *env) *cobra.Command {
	o := &captureOptions{}
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
			return runCapture(e, o, command)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.out, "output", "o", "", "directory to write (created 0700; must not exist or be empty)")
	f.BoolVar(&o.usb, "usb", false, "capture USB with usbmon")
	f.IntVar(&o.bus, "bus", 0, "USB bus to capture (0: all)")
	f.BoolVar(&o.mmio, "mmio", false, "capture MMIO with mmiotrace")
	f.StringVar(&o.bind, "bind", "", "PCI device (DDDD:BB:DD.F) to unbind before and bind while tracing MMIO")
	f.StringArrayVar(&o.events, "events", nil, "user event to record: NAME, or 'NAME FIELDS' to register it (repeatable)")
	f.DurationVar(&o.duration, "duration", 0, "stop after this long (0: at the end of the command, or on Ctrl-C)")
	f.IntVar(&o.bufferKB, "buffer-kb", 0, "per-CPU ring buffer of the user events instance (0: kernel default)")
	f.BoolVar(&o.allowLoss, "allow-loss", false, "exit 0 even when a source lost events")
	f.StringVar(&o.parquet, "parquet", "", "when the capture ends, export it as Parquet tables under `DIR` (as iotap export, identity of this system)")
	return linuxOnly(c)
}

// runCapture checks the flags and runs the capture session (package
// capture).
func runCapture(e *env, o *captureOptions, command []string) error {
	if o.out == "" {
		return usageErrorf("capture: -o DIR is required")
	}
	if !o.usb && !o.mmio && len(o.events) == 0 {
		return usageErrorf("capture: choose at least one source: --usb, --mmio, --events NAME")
	}
	if o.bind != "" && !o.mmio {
		return usageErrorf("capture: --bind needs --mmio")
	}
	if o.bus < 0 || o.bus > 255 {
		return usageErrorf("capture: --bus %d: want 0 (all buses) to 255", o.bus)
	}
	opt := capture.Options{Dir: o.out, USB: o.usb, Bus: o.bus, MMIO: o.mmio, Command: command,
		Stdout: e.stdout, Stderr: e.stderr, Duration: o.duration, BufferKB: o.bufferKB,
		Logf: func(format string, args ...any) { fmt.Fprintf(e.stderr, "iotap: "+format+"\n", args...) }}
	if o.bind != "" {
		a, err := mmiotrace.ParsePCIAddr(o.bind)
		if err != nil {
			return usageErrorf("capture: --bind: %v", err)
		}
		opt.Bind = &a
	}
	for _, a := range o.events {
		ev, err := userevents.ParseTarget(a)
		if err != nil {
			return usageErrorf("capture: --events %q: %v", strings.TrimSpace(a), err)
		}
		opt.Events = append(opt.Events, ev)
	}
	res, err := capture.Run(e.ctx, opt)
	var nf *capture.EventNotFoundError
	if errors.As(err, &nf) {
		return usageErrorf("capture: --events %s: %v (register it, or give its fields: --events 'NAME FIELDS')", nf.Name, nf.Err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "captured into %s (clocks in %s)\n", o.out, filepath.Join(o.out, capture.ClocksFile))
	loss := res.Loss
	if o.parquet != "" {
		rows, err := export.Dir(e.ctx, res.Dir, export.Options{Dir: o.parquet, IotapVersion: version})
		if err != nil {
			return err
		}
		for _, r := range rows {
			fmt.Fprintf(e.stderr, "iotap: capture: exported %s: %d records to %s\n", r.SourceFile, r.Records, o.parquet)
		}
		loss = append(loss, export.Unrecorded(rows, res.Lost)...)
	}
	if len(loss) == 0 {
		return nil
	}
	return capture.EndLoss("capture: "+strings.Join(loss, "; "), " (use --allow-loss to accept)", o.allowLoss, e.warn)
}
