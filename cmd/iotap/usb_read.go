package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/internal/timerange"
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
	bus       int
	dev       int
	ep        int
	typ       string
	dir       string
	status    string
	vidpid    string
	from, to  string
	expr      string            // -Y/--filter
	window    *usb.WindowFilter // --from/--to, once filter ran
	sysfs     string
	hexDump   bool
	count     uint64 // usb read -c
	// summary is set for a command printing only at the end (usb stats):
	// its progress is shown even when stdout is the terminal.
	summary bool
}

func (o *usbAnOptions) register(fs *pflag.FlagSet, filters bool) {
	fs.BoolVar(&o.json, "json", false, "print NDJSON (one JSON object per line)")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "skip text lines that do not parse (counted, reported on stderr)")
	fs.BoolVar(&o.allowLoss, "allow-loss", false, "exit 0 even when the input records dropped or truncated data")
	if !filters {
		return
	}
	o.bus, o.dev, o.ep = -1, -1, -1
	fs.Var((*optInt)(&o.bus), "bus", "only bus `N`")
	fs.Var((*optInt)(&o.dev), "dev", "only device address `N`")
	fs.Var((*optInt)(&o.ep), "ep", "only endpoint number `N` (0-15, both directions)")
	fs.StringVar(&o.typ, "type", "", "only transfer type `ctrl|bulk|intr|iso`")
	fs.StringVar(&o.dir, "dir", "", "only direction `in|out`")
	fs.StringVar(&o.status, "status", "", "only completions with `STATUS` (number, errno name such as EPIPE, or stall)")
	fs.StringVar(&o.vidpid, "vidpid", "", "only the device `VVVV:PPPP` (learned from enumeration in the capture, or sysfs with --sysfs)")
	fs.StringVar(&o.from, "from", "", "only events at or after `TIME`: seconds from the first event (1.5, 200ms), @T on the capture's clock, or RFC 3339 wall clock (see 'iotap cut --help')")
	fs.StringVar(&o.to, "to", "", "only events before `TIME` (same forms as --from; +D: D after --from)")
	fs.StringVarP(&o.expr, "filter", "Y", "", "only events matching the display-filter `EXPR`, tshark's usb.* fields docs/filters.md")
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

// filter builds the event filter of the flags; ids serves --vidpid.
func (o *usbAnOptions) filter(ids *usb.Identities) (usb.Filter, error) {
	var fs []usb.Filter
	if o.bus >= 0 {
		if o.bus > 0xffff {
			return nil, usageErrorf("--bus %d out of range", o.bus)
		}
		fs = append(fs, usb.BusIs(uint16(o.bus)))
	}
	if o.dev >= 0 {
		if o.dev > 127 {
			return nil, usageErrorf("--dev %d out of range 0..127", o.dev)
		}
		fs = append(fs, usb.DeviceIs(uint8(o.dev)))
	}
	if o.ep >= 0 {
		if o.ep > 15 {
			return nil, usageErrorf("--ep %d out of range 0..15", o.ep)
		}
		fs = append(fs, usb.EndpointIs(uint8(o.ep)))
	}
	if o.typ != "" {
		t, err := usb.ParseTransferType(o.typ)
		if err != nil {
			return nil, usageErrorf("--type: %v", err)
		}
		fs = append(fs, usb.TransferIs(t))
	}
	switch strings.ToLower(o.dir) {
	case "":
	case "in":
		fs = append(fs, usb.DirectionIs(true))
	case "out":
		fs = append(fs, usb.DirectionIs(false))
	default:
		return nil, usageErrorf("--dir %q: want in or out", o.dir)
	}
	if o.status != "" {
		st, ok := usb.ParseStatus(o.status)
		if !ok {
			return nil, usageErrorf("--status %q: want a number, an errno name (EPIPE, ENOENT, ...) or stall", o.status)
		}
		fs = append(fs, usb.StatusIs(st))
	}
	if o.vidpid != "" {
		v, p, err := usb.ParseVIDPID(o.vidpid)
		if err != nil {
			return nil, usageErrorf("--vidpid: %v", err)
		}
		fs = append(fs, usb.DeviceIDIs(ids, v, p))
	}
	if o.expr != "" {
		f, err := usb.ParseFilter(o.expr, ids)
		if err != nil {
			return nil, usageErrorf("-Y: %v", err)
		}
		fs = append(fs, f)
	}
	if spec, err := timerange.ParseSpec(o.from, o.to); err != nil {
		return nil, usageErrorf("%v", err)
	} else if spec.Set() {
		wf, err := usb.NewWindowFilter(spec)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		o.window = wf
		fs = append(fs, wf.Keep)
	}
	return usb.All(fs...), nil
}

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
	live bool
}

func isRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

func openUSBAnInput(e *env, o *usbAnOptions, path string) (*usbAnInput, error) {
	in := &usbAnInput{opt: o, e: e}
	ids := usb.NewIdentities()
	if o.sysfs != "" {
		if err := ids.AddSysfs(o.sysfs); err != nil {
			return nil, err
		}
	}
	f, err := o.filter(ids)
	if err != nil {
		return nil, err
	}
	var src io.Reader
	if path == "-" {
		src = os.Stdin
		in.live = !isRegular(os.Stdin)
	} else {
		t, err := openTrace(path, detect.USB)
		if err != nil {
			return nil, err
		}
		src, in.closer = e.meterReader("iotap: usb", t.File, t, !o.summary), t
		in.live = !isRegular(t.File)
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
	in.pl = usb.NewPipeline(r, f, ids)
	in.pl.Limit = o.count
	if f := r.Format(); (f == usbmon.Format1u || f == usbmon.Format1t) && (isWallClock(o.from) || isWallClock(o.to)) {
		in.close()
		return nil, usageErrorf("%s is a usbmon text capture: its timestamps are not wall-clock times; give --from/--to in seconds from the first event", path)
	}
	return in, nil
}

func isWallClock(s string) bool {
	w, err := timerange.Parse(s, "")
	return s != "" && err == nil && w.Wall
}

func (in *usbAnInput) close() {
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
	var lost []string
	if readErr != nil {
		if !errors.Is(readErr, usbmon.ErrTruncated) {
			return readErr
		}
		lost = append(lost, readErr.Error())
	}
	if s, ok := in.pl.Reader.(usbmon.Skipper); ok && s.Skipped() > 0 {
		lost = append(lost, fmt.Sprintf("%d unreadable lines skipped", s.Skipped()))
	}
	if d, ok := in.pl.Reader.(interface{ Dropped() uint64 }); ok && d.Dropped() > 0 {
		lost = append(lost, fmt.Sprintf("the capture records %d events dropped by the kernel", d.Dropped()))
	}
	if len(lost) == 0 {
		return nil
	}
	msg := strings.Join(lost, "; ")
	if in.opt.allowLoss {
		fmt.Fprintf(in.e.stderr, "iotap: warning: %s\n", msg)
		return nil
	}
	return dataLostError("%s (use --allow-loss to accept)", msg)
}

// usbAddr formats the usbmon address word: Ci:3:006:0 (Ci:006:0 for '1t'
// text, which has no bus number).
func usbAddr(dst []byte, ev *usbmon.Event) []byte {
	dst = append(dst, ev.Transfer.Letter())
	if ev.In {
		dst = append(dst, 'i')
	} else {
		dst = append(dst, 'o')
	}
	dst = append(dst, ':')
	if ev.Fields&usbmon.HasBus != 0 { // '1t' text has no bus number
		dst = strconv.AppendUint(dst, uint64(ev.Bus), 10)
		dst = append(dst, ':')
	}
	if ev.Device < 100 {
		dst = append(dst, '0')
	}
	if ev.Device < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendUint(dst, uint64(ev.Device), 10)
	dst = append(dst, ':')
	return strconv.AppendUint(dst, uint64(ev.Endpoint), 10)
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
		t := usb.Micros(ev)
		rel := float64(usbElapsed(in.pl.First, t, ev)) / 1e6
		d := dec.Decode(ev, p, paired)
		line = appendUSBLine(line[:0], seq, rel, ev, p, paired, d)
		if o.hexDump && ev.HasData() {
			line = appendHexDump(line, ev.Data)
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

func usbElapsed(first, t int64, ev *usbmon.Event) int64 {
	d := t - first
	if ev.Fields&usbmon.HasWallClock == 0 && d < 0 {
		d += 4096 * 1000000
	}
	return d
}

// appendUSBLine renders one event for humans.
func appendUSBLine(b []byte, seq uint64, rel float64, ev *usbmon.Event, p usb.Pair, paired bool, d usb.Decoded) []byte {
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, rel, 'f', 6, 64)
	b = append(b, ' ', byte(ev.Type), ' ')
	b = usbAddr(b, ev)
	if ev.Type != usbmon.Submission {
		b = append(b, ' ')
		b = append(b, usb.StatusName(ev.Status)...)
		if usb.IsStall(ev.Status) {
			b = append(b, "(stall)"...)
		}
	}
	if ev.Type != usbmon.Submission || !ev.HasSetup() || d.Summary == "" { // the request shows wLength
		b = append(b, " len="...)
		b = strconv.AppendUint(b, uint64(ev.Length), 10)
	}
	if paired {
		b = append(b, " lat="...)
		b = append(b, time.Duration(p.Latency*1000).String()...)
	}
	switch {
	case d.Summary != "":
		b = append(b, ' ')
		b = append(b, d.Summary...)
		if d.Err != nil {
			b = append(b, " [partial: "...)
			b = append(b, d.Err.Error()...)
			b = append(b, ']')
		}
	case ev.Type == usbmon.Submission && ev.HasSetup():
		b = append(b, " setup="...)
		b = hex.AppendEncode(b, ev.Setup[:])
	}
	if d.Summary == "" && ev.HasData() {
		b = append(b, " data="...)
		n := min(len(ev.Data), 16)
		b = hex.AppendEncode(b, ev.Data[:n])
		if len(ev.Data) > n {
			b = append(b, "..."...)
		}
	}
	return append(b, '\n')
}

// appendHexDump renders data as tcpdump -X does: offset, 16 bytes in hex,
// the same bytes as ASCII.
func appendHexDump(b, data []byte) []byte {
	const digits = "0123456789abcdef"
	for off := 0; off < len(data); off += 16 {
		row := data[off:min(off+16, len(data))]
		b = append(b, "    "...)
		for s := 12; s >= 0; s -= 4 {
			b = append(b, digits[(off>>s)&15])
		}
		b = append(b, "  "...)
		for i := 0; i < 16; i++ {
			if i < len(row) {
				b = append(b, digits[row[i]>>4], digits[row[i]&15], ' ')
			} else {
				b = append(b, "   "...)
			}
			if i == 7 {
				b = append(b, ' ')
			}
		}
		b = append(b, ' ')
		for _, c := range row {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			b = append(b, c)
		}
		b = append(b, '\n')
	}
	return b
}
