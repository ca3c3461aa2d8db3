package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

func newUSBConvertCmd(e *env) *cobra.Command {
	var (
		a         usb.ConvertArgs
		window    windowFlags
		allowLoss lossFlag
	)
	c := &cobra.Command{
		Use:   "convert --format 1u|1t|pcap|pcapng [flags] FILE -o OUT",
		Short: "Convert usbmon captures between text (1u, 1t), pcap and pcapng",
		Long: `Convert a usbmon capture to another format. The input format (text 1u or 1t,
pcap or pcapng with link type 189 or 220, either byte order) is detected from
the content; "-" reads standard input. -o - writes to standard output; files
are created with mode 0600.

What the target cannot hold is counted and reported on stderr: text keeps at
most 32 data bytes, 5 ISO descriptors and no wall clock (its timestamp is
derived from the wall clock when the input has none of its own); '1t' has no
bus numbers and no interval/start frame; link type 189 (--link-type 189) has
no interval, start frame, transfer flags or ISO descriptors. Text converted
to pcap gets timestamps from its own microsecond stamp.

--from/--to convert only the events of a time window (the syntax of
'iotap cut --help': seconds from the first event, @T, RFC 3339, mark:NAME),
cut from the input in-process, seeking with INPUT.iotapidx when there is
one. --time LO..HI is the same window in one flag.

Exit code 3 when the input is truncated, records events dropped by the
kernel, or had unreadable lines skipped (--keep-going), unless --allow-loss.

--format was called --to before: --to 1u, 1t, pcap or pcapng (a format, not
a time) still means --format, with a deprecation note.`,
		Example: `  iotap usb convert --format 1u capture.pcapng -o capture.txt
  iotap usb convert --format pcapng 0u.txt -o 0u.pcapng
  iotap usb convert --format pcap --link-type 189 capture.pcapng -o old.pcap
  iotap usb convert --format pcapng --from 10 --to +1s capture.pcapng -o second10.pcapng
  iotap usb convert --format pcapng -Y 'usb.ep == 0x81 && usb.status != 0' capture.pcapng -o errors.pcapng`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := usbmon.ParseFormat(window.to); err == nil && a.Format == "" {
				fmt.Fprintf(e.stderr, "iotap: --to %s is deprecated for usb convert: use --format (--to is the end of a time window in iotap)\n", window.to)
				a.Format, window.to = window.to, ""
			}
			spec, err := window.spec("usb convert")
			if err != nil {
				return err
			}
			opt, err := a.Options()
			if err != nil {
				return usageErrorf("%v", err)
			}
			return runUSBConvert(e, args[0], outputFlag(a.Path), opt, allowLoss, spec)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&a.Format, "format", "f", "", "target format: 1u, 1t, pcap or pcapng")
	// --to 1u|1t|pcap|pcapng is the old --format: deprecated, said on
	// stderr (cobra's MarkDeprecated prints on stdout, into -o - output).
	window.add(fl, "convert only the events at or after `TIME` (see 'iotap cut --help')", windowToHelp, windowTimeHelp)
	(*outputFlag)(&a.Path).add(fl, "", "output file (created 0600), - for stdout")
	fl.IntVar(&a.LinkType, "link-type", usbmon.LinkTypeUSBLinuxMmapped, "pcap/pcapng link type: 220 (64-byte headers, ISO descriptors) or 189 (48-byte)")
	fl.StringVarP(&a.Filter, "filter", "Y", "", "write only the events matching the display-filter `EXPR` (tshark's usb.* fields, docs/filters.md)")
	fl.BoolVar(&a.KeepGoing, "keep-going", false, "skip text lines that do not parse (counted)")
	allowLoss.add(fl, "exit 0 even when input was truncated, dropped or skipped")
	return c
}

func runUSBConvert(e *env, in string, out outputFlag, opt usbmon.ConvertOptions, allowLoss lossFlag, spec timerange.Spec) error {
	r, err := cut.OpenReader(e.ctx, in, detect.USB, spec, e.warn)
	if err != nil {
		return windowUsage("usb convert", err)
	}
	defer r.Close()
	var src io.Reader = r
	if r.Stream == nil && in != "-" {
		src = e.meter("iotap: usb convert", r.Size(), out == "-").Reader(r)
	}
	dst, err := out.create(e, outfile.Atomic, in)
	if err != nil {
		return err
	}
	opt.OnSkip = usbmon.LogSkipped(e.stderr, "iotap: skipped: ")
	res, err := usbmon.Convert(e.ctx, src, dst, opt)
	if res.From == usbmon.FormatUnknown && err != nil {
		return fmt.Errorf("%s: %w", in, err)
	} else if err != nil {
		return err
	}
	if err := dst.Commit(); err != nil {
		return err
	}
	for _, l := range res.Summary() {
		fmt.Fprintf(e.stderr, "iotap: %s\n", l)
	}
	lost, err := res.Loss()
	if err != nil {
		return fmt.Errorf("%s: %w (%d events converted before it)", in, err, res.Events)
	}
	lost = append(lost, r.Loss()...)
	return allowLoss.check(e, in+": ", lost, "use --allow-loss to accept")
}
