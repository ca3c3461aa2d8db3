package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/ndjson"
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
			return runUSBRead(e, &o, args[0])
		},
	}
	o.register(c.Flags(), true)
	c.Flags().Uint64VarP(&o.count, "count", "c", 0, "stop after `N` printed events, like tshark -c (0: all)")
	c.Flags().BoolVarP(&o.hexDump, "hex", "x", false, "also print the captured data of every event as a hex and ASCII dump")
	return c
}

// usbAnOptions are the input and filter flags shared by read, stats and
// pair.
type usbAnOptions struct {
	json      bool
	keepGoing bool
	allowLoss bool
	sel       usb.Selection
	window    *usb.WindowFilter // --from/--to, once filter ran
	sysfs     string
	hexDump   bool
	count     uint64 // usb read -c
	// summary is set for a command printing only at the end (usb stats):
	// its progress is shown even when stdout is the terminal.
	summary bool
	workers int // --workers (usbmon.UsePrefetch)
}

func (o *usbAnOptions) register(fs *pflag.FlagSet, filters bool) {
	fs.BoolVar(&o.json, "json", false, "print NDJSON (one JSON object per line)")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "skip text lines that do not parse (counted, reported on stderr)")
	fs.BoolVar(&o.allowLoss, "allow-loss", false, "exit 0 even when the input records dropped or truncated data")
	fs.IntVar(&o.workers, "workers", 0, "decoding goroutines: 2 decodes a pcap or pcapng file on a goroutine of its own, ahead of pairing and output (0: 2 for a file of 16 MiB or more on more than 2 cores, else 1)")
	o.sel = usb.AnySelection()
	if !filters {
		return
	}
	fs.Var((*optInt)(&o.sel.Bus), "bus", "only bus `N`")
	fs.Var((*optInt)(&o.sel.Device), "dev", "only device address `N`")
	fs.Var((*optInt)(&o.sel.Endpoint), "ep", "only endpoint number `N` (0-15, both directions)")
	fs.StringVar(&o.sel.Type, "type", "", "only transfer type `ctrl|bulk|intr|iso`")
	fs.StringVar(&o.sel.Dir, "dir", "", "only direction `in|out`")
	fs.StringVar(&o.sel.Status, "status", "", "only completions with `STATUS` (number, errno name such as EPIPE, or stall)")
	fs.StringVar(&o.sel.VIDPID, "vidpid", "", "only the device `VVVV:PPPP` (learned from enumeration in the capture, or sysfs with --sysfs)")
	fs.StringVar(&o.sel.From, "from", "", "only events at or after `TIME`: seconds from the first event (1.5, 200ms), @T on the capture's clock, or RFC 3339 wall clock (see 'iotap cut --help')")
	fs.StringVar(&o.sel.To, "to", "", "only events before `TIME` (same forms as --from; +D: D after --from)")
	fs.StringVarP(&o.sel.Expr, "filter", "Y", "", "only events matching the display-filter `EXPR`, tshark's usb.* fields docs/filters.md")
	fs.StringVar(&o.sysfs, "sysfs", "", "also learn device identities from this sysfs `DIR` (e.g. /sys/bus/usb/devices) for devices not enumerated in the capture")
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

// usbAnInput is an opened capture plus what the analysis commands share:
// pairing and identities over all events, the output filter.
type usbAnInput struct {
	pl       *usb.Pipeline // reading, pairing, identities, filter
	closer   io.Closer
	opt      *usbAnOptions
	e        *env
	skipErrs int
	// live is set when the input is a pipe or FIFO (a capture piped in):
	// output is then flushed event by event.
	live     bool
	prefetch *usbmon.PrefetchReader // --workers 2
}

func openUSBAnInput(e *env, o *usbAnOptions, path string) (*usbAnInput, error) {
	in := &usbAnInput{opt: o, e: e}
	ids := usb.NewIdentities()
	if o.sysfs != "" {
		if err := ids.AddSysfs(o.sysfs); err != nil {
			return nil, err
		}
	}
	f, wf, err := o.sel.Filter(ids)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	o.window = wf
	var src io.Reader
	size := int64(-1)
	if path == "-" {
		src = os.Stdin
		in.live = !detect.IsRegular(os.Stdin)
	} else {
		t, err := detect.OpenTrace(path, detect.USB)
		if err != nil {
			return nil, err
		}
		src, in.closer = e.meterReader("iotap: usb", t.File, t, !o.summary), t
		in.live, size = !t.Regular(), t.Size()
	}
	opt := usbmon.ReaderOptions{KeepGoing: o.keepGoing, OnSkip: func(err error) {
		in.skipErrs++
		if in.skipErrs <= 10 {
			fmt.Fprintf(e.stderr, "iotap: skipped: %v\n", err)
		}
	}}
	r, _, err := usbmon.NewReaderOptions(src, opt)
	if err != nil {
		in.close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !in.live && usbmon.UsePrefetch(r, size, o.workers) {
		in.prefetch = usbmon.Prefetch(r)
		r = in.prefetch
	}
	in.pl = usb.NewPipeline(r, f, ids)
	in.pl.Limit = o.count
	if f := r.Format(); (f == usbmon.Format1u || f == usbmon.Format1t) && o.sel.WallClock() {
		in.close()
		return nil, usageErrorf("%s is a usbmon text capture: its timestamps are not wall-clock times; give --from/--to in seconds from the first event", path)
	}
	return in, nil
}

func (in *usbAnInput) close() {
	if in.prefetch != nil {
		in.prefetch.Close()
	}
	if in.closer != nil {
		in.closer.Close()
	}
}

// each runs the pairing pipeline (usb.Pipeline.Each).
func (in *usbAnInput) each(fn func(seq uint64, ev *usbmon.Event, p usb.Pair, paired bool) error) error {
	return in.pl.Each(in.e.ctx, fn)
}

// finish turns the end state of the input into the command's error: the
// read error, and lost data (truncation, drops, skipped lines) as exit
// code 3 unless --allow-loss.
func (in *usbAnInput) finish(readErr error) error {
	if w := in.opt.window; w != nil && w.Err() != nil {
		return usageErrorf("%v", w.Err())
	}
	lost, err := in.pl.Loss(readErr)
	if err != nil {
		return err
	}
	return in.e.dataLoss(in.opt.allowLoss, "", lost, "use --allow-loss to accept")
}

func runUSBRead(e *env, o *usbAnOptions, path string) error {
	in, err := openUSBAnInput(e, o, path)
	if err != nil {
		return err
	}
	defer in.close()
	dec := usb.NewDecoder(in.pl.Identities)
	if o.json {
		return runUSBReadJSON(in, dec, path)
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	var line []byte
	readErr := in.each(func(seq uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
		rel := float64(usb.Elapsed(in.pl.First, usb.Micros(ev), ev)) / 1e6
		line = usb.AppendEventText(line[:0], seq, rel, ev, p, paired, dec.Decode(ev, p, paired))
		if o.hexDump && ev.HasData() {
			line = usb.AppendHexDump(line, ev.Data)
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if in.live {
			return w.Flush()
		}
		return nil
	})
	if err := w.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return in.finish(readErr)
}

// runUSBReadJSON writes the "usb_event" records (docs/ndjson.md).
func runUSBReadJSON(in *usbAnInput, dec *usb.Decoder, path string) error {
	w := ndjson.NewWriter(in.e.stdout)
	w.Live = in.live
	w.B = usb.AppendInput(w.B, path, in.pl.Reader.Format())
	enc := usb.EventEncoder{Identities: in.pl.Identities}
	readErr := in.each(func(seq uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
		w.B = enc.Append(w.B, seq, ev, p, paired, dec.Decode(ev, p, paired))
		return w.Flushed()
	})
	if err := w.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return in.finish(readErr)
}
