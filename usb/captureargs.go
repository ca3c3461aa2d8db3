package usb

import (
	"errors"
	"fmt"
	"time"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/usbmon"
)

// CaptureArgs are the options of 'iotap usb capture' in the form its
// flags give them (the field comments name the flags); FileOptions checks
// them and builds the capture, and its errors name the flags.
type CaptureArgs struct {
	Path          string        // -o: the output file, "-" for standard output
	Bus           int           // --bus: 0 (all buses) to 255
	Method        string        // --method: mmap, read or text (usbmon.ParseMethod)
	Format        string        // --format: pcapng, pcap, 1u or 1t (usbmon.ParseFormat)
	RingSize      string        // --ring-size: bytes, K or M suffix ("": the kernel's default)
	Queue         string        // --queue: bytes, K or M suffix ("0": read the ring in place)
	Nice          string        // --nice: usbmon.ParseNice
	Snaplen       int           // --snaplen: data bytes kept per event (0: all)
	Count         uint64        // --count: stop after this many events (0: no limit)
	VIDPID        string        // --vidpid: VVVV:PPPP (LiveFilter)
	Device        int           // --dev: a device address (0: any)
	StatsInterval time.Duration // --stats-interval
	NoInject      bool          // --no-inject-descriptors
	Duration      time.Duration // --duration: stop after this long (0: no limit)
	// Rotate is --ring, --file-size, --file-duration and --interval: a
	// ring of files (rotate.Args.Options) and the interval of
	// Record.Interval (its OnInterval is the caller's).
	Rotate rotate.Args
}

// FileOptions checks a and returns the usbmon.CaptureToFile options it
// asks for, with the device filter (LiveFilter) and, unless NoInject, the
// descriptors of the devices present (DescriptorPrelude) read from the
// sysfs root (DefaultSysfsRoot on a live system), and the ring of files
// and interval of Rotate; warn receives the devices whose descriptors
// cannot be read. A bad flag value is an error that names the flag and
// matches ErrSelection; an unreadable sysfs with VIDPID does not.
func (a CaptureArgs) FileOptions(root string, warn func(error)) (usbmon.FileOptions, error) {
	var o usbmon.FileOptions
	if err := a.parse(&o); err != nil {
		return o, &selectionError{err}
	}
	keep, err := LiveFilter(root, a.VIDPID, uint8(a.Device))
	if err != nil {
		return o, fmt.Errorf("--vidpid: %w", err)
	}
	if o.Rotate, err = a.Rotate.Options(a.Path); err != nil {
		return o, &selectionError{err}
	}
	o.Path, o.Duration, o.Record = a.Path, a.Duration, usbmon.RecordOptions{Keep: keep, Snaplen: a.Snaplen, Count: a.Count, StatsInterval: a.StatsInterval, Interval: a.Rotate.Interval}
	if !a.NoInject {
		o.Prelude = DescriptorPrelude(root, a.Bus, warn)
	}
	return o, nil
}

// parse checks the flag values into o's format, capture and nice value.
func (a CaptureArgs) parse(o *usbmon.FileOptions) (err error) {
	if a.Path == "" {
		return errors.New("-o FILE is required (- for stdout)")
	}
	if a.Duration < 0 {
		return fmt.Errorf("--duration %v: want 0 (no limit) or more", a.Duration)
	}
	c := &o.Capture
	c.Bus = a.Bus
	if c.Method, err = usbmon.ParseMethod(a.Method); err != nil {
		return err
	}
	if o.Format, err = usbmon.ParseFormat(a.Format); err != nil {
		return err
	}
	if a.RingSize != "" {
		if c.RingSize, err = rotate.ParseSize(a.RingSize); err != nil {
			return fmt.Errorf("--ring-size: %v", err)
		}
		if c.RingSize < usbmon.RingSizeMin || c.RingSize > usbmon.RingSizeMax {
			return fmt.Errorf("--ring-size %d: the kernel accepts %d (%dK) to %d (%dK) bytes",
				c.RingSize, usbmon.RingSizeMin, usbmon.RingSizeMin/1024, usbmon.RingSizeMax, usbmon.RingSizeMax/1024)
		}
	}
	if a.Queue != "0" {
		if c.Queue, err = rotate.ParseSize(a.Queue); err != nil {
			return fmt.Errorf("--queue: %v", err)
		}
	}
	switch c.Method {
	case usbmon.MethodText:
		c.RingSize, c.Queue = 0, 0 // the text API has no binary ring
	case usbmon.MethodRead:
		c.Queue = 0 // it copies each event out already
	}
	c.TextWallClock = o.Format == usbmon.FormatPcap || o.Format == usbmon.FormatPcapng
	if o.Nice, o.NiceIfAllowed, err = usbmon.ParseNice(a.Nice); err != nil {
		return fmt.Errorf("--nice %q: want -20..19 or auto", a.Nice)
	}
	switch {
	case a.Snaplen < 0:
		return fmt.Errorf("--snaplen %d: want 0 (all) or more", a.Snaplen)
	case a.Bus < 0 || a.Bus > 255:
		return fmt.Errorf("--bus %d: want 0 (all buses) to 255", a.Bus)
	case a.Device < 0 || a.Device > 127:
		return fmt.Errorf("--dev %d: want a device address, 1 to 127", a.Device)
	}
	if a.VIDPID != "" {
		if _, _, err := ParseVIDPID(a.VIDPID); err != nil {
			return fmt.Errorf("--vidpid: %v", err)
		}
	}
	return nil
}
