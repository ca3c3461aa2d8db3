package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/internal/progress"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// usbCaptureOptions are usb capture's flags: usb.CaptureArgs checks most.
type usbCaptureOptions struct {
	usb.CaptureArgs
	allowLoss lossFlag
	rot       rotateFlags
}

func newUSBCaptureCmd(e *env) *cobra.Command {
	var o usbCaptureOptions
	c := &cobra.Command{
		Use:   "capture [flags] -o FILE",
		Short: "Capture USB traffic with usbmon (pcapng by default)",
		Long: `Capture the URBs of one USB bus (--bus N) or of all buses (--bus 0, the
default) through the kernel's usbmon, into FILE (mode 0600; - for stdout).

Methods (--method):
  mmap  map the binary ring of /dev/usbmonN and fetch events in batches
        (MON_IOCX_MFETCH): the fastest, and the default
  read  one MON_IOCX_GETX ioctl per event (64-byte header and all data)
  text  the deprecated text API (debugfs usb/usbmon/Nu): 32 data bytes at
        most, no wall clock

With mmap, a thread of its own drains the kernel ring: it copies each event
out into a queue in memory (--queue, default 32M) and releases the ring
space at once, while the events are encoded and written on another thread.
Both threads run at nice -20 when the process is allowed to raise its
priority (--nice auto, the default; --nice 0 leaves them alone): the writer
too, or the process generating the traffic starves it and, through the
queue they share, the draining thread. --queue 0
reads the ring in place instead (zero copy, the ring is released only once
a batch is written).

--ring-size sets the binary ring (default 1200K, the kernel's maximum; the
kernel accepts 8K to 1200K). A small ring drops events under load. Drops are
read from the kernel (MON_IOCG_STATS; text_lost for text) during and at the
end of the capture, written to the pcapng file as interface statistics
(ifdrop) and reported on stderr; the exit code is then 3 unless
--allow-loss. The end report also says how close the capture came to
losing events (the fullest ring seen, the longest time the ring was not
drained, the largest queue).

--vidpid VVVV:PPPP keeps only the events of matching devices: those present
at the start are identified from sysfs (/sys/bus/usb/devices), those that
enumerate during the capture from their device descriptor as it is
captured; the events of a device before its device descriptor was read do
not match. --dev N keeps one device address. The kernel still queues every
event of the bus: drop counts cover all of them.

The output is flushed after every batch of events, so a capture killed even
with SIGKILL leaves a file that reads back up to the last complete record.
SIGINT/SIGTERM stop it cleanly: the events still queued in the kernel are
written, then the statistics. Needs root (usbmon sees keystrokes); when
usbmon is missing, load it (modprobe usbmon, CONFIG_USB_MON) and for the
text method mount debugfs.`,
		Example: `  iotap usb capture -o usb.pcapng                 # all buses until Ctrl-C
  iotap usb capture --bus 3 --duration 30s -o storage.pcapng
  iotap usb capture --method text --format 1u -o - | head
  iotap usb capture --vidpid 0627:0001 -o keyboard.pcapng
  iotap usb capture --file-size 100M --ring 10 --interval 1s -o usb.pcapng`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUSBCapture(e, &o)
		},
	}
	fl := c.Flags()
	fl.IntVar(&o.Bus, "bus", 0, "bus number (0 = all buses)")
	fl.StringVar(&o.RingSize, "ring-size", "1200K", "binary ring size in bytes, K or M suffix (8K..1200K)")
	fl.StringVar(&o.Queue, "queue", "32M", "mmap: memory queue between the ring-draining thread and the writer, K or M suffix (0: read the ring in place)")
	fl.StringVar(&o.Method, "method", "mmap", "kernel interface: mmap, read (MON_IOCX_GETX) or text")
	fl.StringVar(&o.Format, "format", "pcapng", "output format: pcapng, pcap, 1u or 1t")
	fl.BoolVar(&o.NoInject, "no-inject-descriptors", false, "pcapng: do not write the present devices' descriptors (from sysfs) as synthesized GET_DESCRIPTOR transfers at the start")
	fl.StringVarP(&o.Path, "output", "o", "", "output file (created 0600), - for stdout")
	fl.Uint64VarP(&o.Count, "count", "c", 0, "stop after this many events (0: no limit)")
	fl.DurationVar(&o.Duration, "duration", 0, "stop after this long (0: until SIGINT/SIGTERM)")
	o.allowLoss.add(fl, "exit 0 even when the kernel dropped events")
	fl.IntVar(&o.Snaplen, "snaplen", 0, "keep at most this many data bytes per event (0: all); the header keeps the real lengths")
	fl.StringVar(&o.Nice, "nice", "auto", "nice value of the ring-draining thread (-20..19; negative needs root), or auto: -20 if allowed")
	fl.StringVar(&o.VIDPID, "vidpid", "", "keep only the events of devices `VVVV:PPPP` (identified from sysfs at start and from enumeration seen in the capture)")
	fl.IntVar(&o.Device, "dev", 0, "keep only the events of device address N (with --bus N: of that bus)")
	o.rot.add(fl, ".pcapng", "events and bytes")
	fl.DurationVar(&o.StatsInterval, "stats-interval", 10*time.Second, "how often drop statistics are written to a pcapng file")
	return linuxOnly(c)
}

func runUSBCapture(e *env, o *usbCaptureOptions) error {
	o.Rotate = o.rot.Args
	fopt, err := o.FileOptions(usb.DefaultSysfsRoot, func(err error) { e.warn(err.Error()) })
	if err != nil {
		return usbError(err)
	}
	if o.rot.onInterval(e) != nil {
		fopt.Record.OnInterval = func(s usbmon.IntervalStats) { fmt.Fprintln(e.stderr, s) }
	}
	if progress.IsTerminal(e.stderr) {
		fopt.Record.Progress = func(n, dropped uint64) { fmt.Fprintf(e.stderr, "\r%d events, %d dropped ", n, dropped) }
	}
	fopt.Create = commitCreate(e)
	fopt.Started = func(capt *usbmon.Capture, prelude int) {
		if prelude >= 0 {
			fmt.Fprintf(e.stderr, "iotap: %d synthesized descriptor events (from sysfs) written first; --no-inject-descriptors leaves them out\n", prelude)
		}
		fmt.Fprintf(e.stderr, "iotap: capturing %s; SIGINT stops\n", fopt.Describe(capt))
	}
	res, err := usbmon.CaptureToFile(e.ctx, fopt)
	if errors.Is(err, usbmon.ErrNotSupported) {
		return fmt.Errorf("%w (try 'iotap doctor')", err)
	}
	var ne *usbmon.NiceError
	if errors.As(err, &ne) {
		return fmt.Errorf("--nice %d: %w", ne.Nice, ne.Err)
	}
	if err != nil {
		return err
	}
	if fopt.Record.Progress != nil {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	for _, l := range res.Summary(fopt) {
		fmt.Fprintf(e.stderr, "iotap: %s\n", l)
	}
	if res.WriteErr != nil {
		return fmt.Errorf("write %s: %w", o.Path, res.WriteErr)
	}
	if res.ReadErr != nil {
		return res.ReadErr
	}
	return o.allowLoss.end(e, res.DropMessage(), "")
}
