package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

func newUSBReadCmd(e *env) *cobra.Command {
	var o usbAnOptions
	c := &cobra.Command{
		Use:   "read [flags] FILE",
		Short: "Print usbmon events with decoded requests, descriptors and SCSI commands",
		Long: `Print one line per usbmon event, like a terse Wireshark: control requests by
name with their fields, descriptors returned by GET_DESCRIPTOR, HID report
descriptors, mass storage CBW/CSW with the SCSI command, INQUIRY and READ
CAPACITY data. --json prints one JSON object per event (NDJSON).

FILE is a usbmon text capture ('1u' or '1t', e.g. a copy of
/sys/kernel/debug/usb/usbmon/0u), a pcap or a pcapng file (link type 189 or
220), also compressed by gzip, xz or zstd; the format and compression are
detected from the content. "-" reads standard input. -c N stops after N
printed events.

Columns: event number (position in the input, also with filters: the
numbers 'iotap usb pair' and tshark's frame.number use), seconds since the
first event of the input, S/C/E, the usbmon
address word (transfer type and direction, bus, device, endpoint), status
(completions), length, latency (completions paired with their submission),
decoded payload or the first data bytes.

Filters (--bus, --dev, --ep, --type, --dir, --status, --vidpid, --from,
--to, and -Y with a display-filter expression of tshark's usb.* fields,
docs/filters.md) select what is printed; pairing and device identification always see
every event, so --vidpid works for a device whose enumeration is in the
capture. Exit code 3 when the input is truncated, records dropped events or
has unreadable lines skipped with --keep-going, unless --allow-loss.`,
		Example: `  iotap usb read capture.pcapng
  iotap usb read --type bulk --dir in --vidpid 0781:5583 0u.txt
  iotap usb read --json --status stall capture.pcap | jq .
  iotap usb read -Y 'usb.ep == 0x81 && usb.status != 0' capture.pcapng
  iotap usb read -c 20 capture.pcapng.zst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUSBJob(e, &o, args[0], func(pl *usb.Pipeline) error {
				if o.json {
					return pl.WriteNDJSON(e.ctx, e.stdout, args[0])
				}
				return pl.WriteText(e.ctx, e.stdout, o.hexDump)
			})
		},
	}
	o.register(c.Flags(), true)
	c.Flags().Uint64VarP(&o.Limit, "count", "c", 0, "stop after `N` printed events, like tshark -c (0: all)")
	c.Flags().BoolVarP(&o.hexDump, "hex", "x", false, "also print the captured data of every event as a hex and ASCII dump")
	return c
}

// usbAnOptions are the input and filter flags shared by read, stats and
// pair.
type usbAnOptions struct {
	usb.ReadOptions
	json    bool
	loss    lossFlag
	hexDump bool
	// summary is set for a command printing only at the end (usb stats):
	// its progress is shown even when stdout is the terminal.
	summary bool
}

func (o *usbAnOptions) register(fs *pflag.FlagSet, filters bool) {
	fs.BoolVar(&o.json, "json", false, "print NDJSON (one JSON object per line)")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "skip text lines that do not parse (counted, reported on stderr)")
	o.loss.add(fs, "exit 0 even when the input records dropped or truncated data")
	workersVar(fs, &o.Workers, "decoding goroutines: 2 decodes a pcap or pcapng file on a goroutine of its own, ahead of pairing and output (0: 2 for a file of 16 MiB or more on more than 2 cores, else 1)")
	o.Selection = usb.AnySelection()
	if !filters {
		return
	}
	sel := &o.Selection
	fs.Var((*optInt)(&sel.Bus), "bus", "only bus `N`")
	fs.Var((*optInt)(&sel.Device), "dev", "only device address `N`")
	fs.Var((*optInt)(&sel.Endpoint), "ep", "only endpoint number `N` (0-15, both directions)")
	fs.StringVar(&sel.Type, "type", "", "only transfer type `ctrl|bulk|intr|iso`")
	fs.StringVar(&sel.Dir, "dir", "", "only direction `in|out`")
	fs.StringVar(&sel.Status, "status", "", "only completions with `STATUS` (number, errno name such as EPIPE, or stall)")
	fs.StringVar(&sel.VIDPID, "vidpid", "", "only the device `VVVV:PPPP` (learned from enumeration in the capture, or sysfs with --sysfs)")
	fs.StringVar(&sel.From, "from", "", "only events at or after `TIME`: seconds from the first event (1.5, 200ms), @T on the capture's clock, or RFC 3339 wall clock (see 'iotap cut --help')")
	fs.StringVar(&sel.To, "to", "", windowToHelp)
	fs.StringVarP(&sel.Expr, "filter", "Y", "", "only events matching the display-filter `EXPR`, tshark's usb.* fields docs/filters.md")
	fs.StringVar(&o.Sysfs, "sysfs", "", "also learn device identities from this sysfs `DIR` (e.g. /sys/bus/usb/devices) for devices not enumerated in the capture")
}

// optInt is a non-negative int flag that is unset (-1) by default.
type optInt int

func (v *optInt) String() string {
	if *v < 0 {
		return ""
	}
	return strconv.Itoa(int(*v))
}

func (v *optInt) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return fmt.Errorf("want a number 0..65535")
	}
	*v = optInt(n)
	return nil
}

func (v *optInt) Type() string { return "N" }

// openUSBAnInput opens path for read, stats and pair (detect.OpenUSB)
// through a progress meter: a bad selection is a usage error, found
// before the input is opened.
func openUSBAnInput(e *env, o *usbAnOptions, path string) (*detect.USBInput, error) {
	o.OnSkip = usbmon.LogSkipped(e.stderr, "iotap: skipped: ")
	in, err := detect.OpenUSB(path, o.ReadOptions, func(in *detect.Input) io.Reader {
		return e.meter("iotap: usb", in.Size(), !o.summary).Reader(in)
	})
	return in, usbError(err)
}

// usbError makes a selection that cannot be applied (usb.ErrSelection) a
// usage error.
func usbError(err error) error {
	if errors.Is(err, usb.ErrSelection) {
		return &codeError{code: exitUsage, err: err}
	}
	return err
}

// usbFinish turns the end state of the input path into the command's error: the
// read error, and lost data (truncation, drops, skipped lines) as exit
// code 3 unless --allow-loss.
func usbFinish(e *env, o *usbAnOptions, path string, pl *usb.Pipeline, readErr error) error {
	lost, err := pl.Loss(readErr)
	if err != nil {
		return usbError(err)
	}
	if msg := pl.PastEnd(path); msg != "" {
		e.warn(msg) // as cut and mmio read say it
	}
	return o.loss.check(e, path+": ", lost, "use --allow-loss to accept")
}

// runUSBJob runs job, which returns its read error, over the pipeline of
// path (openUSBAnInput) and ends with usbFinish.
func runUSBJob(e *env, o *usbAnOptions, path string, job func(*usb.Pipeline) error) error {
	in, err := openUSBAnInput(e, o, path)
	if err != nil {
		return err
	}
	defer in.Close()
	return usbFinish(e, o, path, in.Pipeline, job(in.Pipeline))
}
