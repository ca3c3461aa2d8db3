package usbmon

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/iotap/iotap/rotate"
)

// FileOptions configure CaptureToFile: a live capture (Capture) recorded
// (Record) into a file or a ring of files in Format.
type FileOptions struct {
	Capture CaptureOptions
	Record  RecordOptions
	Format  Format
	// Path is the output file ("-" is standard output when Create allows
	// it). Create opens it and each file of a ring; nil creates files
	// mode 0600, exclusively; its Close completes the file.
	Path   string
	Create func(path string) (io.WriteCloser, error)
	// Rotate, if set, writes a ring of files named after Path (its Path
	// and Create are taken from the fields above).
	Rotate *rotate.Options
	// Prelude, if set, gives events written first, to one pcapng file
	// only (where they can be marked; not to a ring of files): iotap
	// writes the descriptors of the devices present (usb.DescriptorEvents),
	// marked synthesized. It is called once the capture is open and the
	// file created. Record.Keep filters the events too.
	Prelude func() []Event
	// Nice is the nice value of the ring-draining thread (Capture.Queue >
	// 0) and of the writing thread; with NiceIfAllowed a refused value is
	// not an error. 0 leaves both alone.
	Nice          int
	NiceIfAllowed bool
	// Started, if set, is called once the capture runs and the output's
	// header and prelude are written, before the first event: the
	// capture's Path and Stats (its ring size) are known then; prelude is
	// the number of prelude events written, -1 when none were asked for
	// or the output is not one pcapng file.
	Started func(c *Capture, prelude int)
	// Duration, if > 0, stops the capture after this long, as a ctx done
	// then does (Record.Count stops it after a number of events).
	Duration time.Duration
}

// FileResult is what CaptureToFile did.
type FileResult struct {
	Stats    RecordStats
	Prelude  int      // prelude events written
	Files    []string // with Rotate: the files kept, oldest first
	Nice     int      // the writing thread's nice value applied (0: none)
	ReadErr  error    // the capture's error (the output is complete up to it)
	WriteErr error    // the output's first error
}

// CaptureToFile is 'iotap usb capture' behind its flags: it opens the
// capture, creates the output, writes the header and the prelude, records
// until ctx is done, Duration has passed or Record.Count events were
// recorded, and completes the output. The kernel's drops are in
// res.Stats.Capture.Dropped, never hidden. err is
// an error before recording (no capture, no output); afterwards the
// capture's and the output's errors are in the result.
func CaptureToFile(ctx context.Context, opt FileOptions) (res FileResult, err error) {
	if opt.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Duration)
		defer cancel()
	}
	create := opt.Create
	if create == nil {
		create = func(p string) (io.WriteCloser, error) {
			return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	copt := opt.Capture
	if copt.Queue > 0 {
		copt.Nice, copt.NiceIfAllowed = opt.Nice, opt.NiceIfAllowed
		// The draining thread must not wait for the writer's P to come
		// back from the Go scheduler: give it one of its own, even on one
		// CPU (the kernel then schedules the two threads by priority).
		if runtime.GOMAXPROCS(0) < 2 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
		}
	}
	rec, err := OpenRecording(ctx, copt, opt.Record)
	if err != nil {
		return res, err
	}
	defer rec.Close()
	capt := rec.Capture()

	var w Writer
	var closeOut func() error
	var rot *Rotator
	if opt.Rotate != nil {
		ro := *opt.Rotate
		ro.Path, ro.Create = opt.Path, create
		if rot, err = NewRotator(ro, func(dst io.Writer) (Writer, error) { return NewWriter(dst, opt.Format) }); err != nil {
			return res, err
		}
		w, closeOut = rot, rot.Close
	} else {
		f, err := create(opt.Path)
		if err != nil {
			return res, err
		}
		if w, err = NewWriter(f, opt.Format); err != nil {
			f.Close()
			return res, err
		}
		closeOut = f.Close
	}
	prelude := -1
	if _, ok := w.(*PcapngWriter); ok && opt.Prelude != nil {
		prelude = 0
		keep := opt.Record.Keep
		evs := opt.Prelude()
		for i := range evs {
			if keep != nil && !keep(&evs[i]) {
				continue
			}
			if err := w.Write(&evs[i]); err != nil {
				closeOut()
				return res, err
			}
			prelude++
		}
		res.Prelude = prelude
	}
	if err := w.Flush(); err != nil { // the file header, before any event
		closeOut()
		return res, err
	}
	if opt.Started != nil {
		opt.Started(capt, prelude)
	}
	// This thread encodes and writes the events. With no queue it is also
	// the one that drains the ring. With a queue it must run at the
	// draining thread's priority all the same: on one CPU a starved writer
	// lost events (docs/performance.md, USB, session 2).
	if opt.Nice != 0 && (copt.Queue == 0 || capt.Stats().Nice != 0) {
		restore, err := LockThreadNice(opt.Nice)
		if err == nil {
			res.Nice = opt.Nice
			defer restore()
		} else if !opt.NiceIfAllowed {
			closeOut()
			return res, &NiceError{Nice: opt.Nice, Err: err}
		}
	}
	res.Stats, res.ReadErr, res.WriteErr = rec.Run(w)
	if err := closeOut(); err != nil && res.WriteErr == nil {
		res.WriteErr = err
	}
	if rot != nil {
		res.Files = rot.Files()
	}
	return res, nil
}

// NiceError is CaptureToFile's refusal of FileOptions.Nice (without
// NiceIfAllowed).
type NiceError struct {
	Nice int
	Err  error
}

func (e *NiceError) Error() string { return fmt.Sprintf("usbmon: nice %d: %v", e.Nice, e.Err) }
func (e *NiceError) Unwrap() error { return e.Err }

// DropMessage describes the events the kernel dropped, with the remedies
// that apply to how the capture ran (its method, ring, queue and nice
// values), in the flag words of 'iotap usb capture' (--ring-size,
// --queue, --nice, --snaplen, --bus), or returns "" when none were
// dropped.
func (r FileResult) DropMessage() string {
	cs, method, queue := r.Stats.Capture, r.Stats.Method, r.Stats.Queue
	if cs.Dropped == 0 {
		return ""
	}
	if method == MethodText {
		return fmt.Sprintf("the kernel's text API lost %d events (text_lost; use --method mmap)", cs.Dropped)
	}
	var help []string
	if cs.RingSize < RingSizeMax {
		help = append(help, fmt.Sprintf("a larger --ring-size (up to %dK)", RingSizeMax/1024))
	}
	if queue == 0 && method == MethodMmap {
		help = append(help, "--queue (drains the ring on a thread of its own)")
	} else if queue > 0 && cs.QueuePeak+RingSizeMax > queue {
		help = append(help, "a larger --queue")
	}
	if cs.Nice == 0 && r.Nice == 0 {
		help = append(help, "--nice -20 as root")
	}
	if len(help) == 0 {
		help = append(help, "--snaplen (less data per event) or --bus (fewer events)")
	}
	return fmt.Sprintf("the kernel dropped %d events (ring %d bytes; ring peak %dK, undrained for at most %v, events waited up to %v; try %s)",
		cs.Dropped, cs.RingSize, (cs.RingPeak+1023)/1024, cs.MaxStall.Round(10*time.Microsecond), cs.MaxWait.Round(10*time.Microsecond), strings.Join(help, ", "))
}

// AutoNice is the nice value ParseNice gives "auto": the highest priority,
// applied only where the process may raise it (root, CAP_SYS_NICE).
const AutoNice = -20

// ParseNice reads a nice value as 'iotap usb capture --nice' takes it:
// -20 to 19, or "auto" (AutoNice if allowed: FileOptions.NiceIfAllowed).
func ParseNice(s string) (nice int, ifAllowed bool, err error) {
	if s == "auto" {
		return AutoNice, true, nil
	}
	nice, err = strconv.Atoi(s)
	if err != nil || nice < -20 || nice > 19 {
		return 0, false, fmt.Errorf("usbmon: nice %q: want -20..19 or auto", s)
	}
	return nice, false, nil
}

// Describe says what the capture c opened for o records, as 'iotap usb
// capture' announces it once it runs (FileOptions.Started): the buses,
// the method and its device or file, and the binary ring's size.
func (o FileOptions) Describe(c *Capture) string {
	buses := "all USB buses"
	if o.Capture.Bus != 0 {
		buses = "USB bus " + strconv.Itoa(o.Capture.Bus)
	}
	if o.Capture.Method == MethodText {
		return fmt.Sprintf("%s via text (%s)", buses, c.Path())
	}
	return fmt.Sprintf("%s via %s (%s), ring %d bytes", buses, o.Capture.Method, c.Path(), c.Stats().RingSize)
}

// Summary is the end report of a CaptureToFile with o, a line each: the
// recording's statistics (RecordStats.String), what the output format
// could not hold, and the events cut to o.Record.Snaplen data bytes. The
// kernel's drops are DropMessage's.
func (r FileResult) Summary(o FileOptions) []string {
	lines := []string{r.Stats.String()}
	if l := r.Stats.Loss; l.Total() > 0 {
		lines = append(lines, fmt.Sprintf("%s cannot hold everything: %s", o.Format, l))
	}
	if r.Stats.Cut > 0 {
		lines = append(lines, fmt.Sprintf("%d events kept only their first %d data bytes (--snaplen)", r.Stats.Cut, o.Record.Snaplen))
	}
	return lines
}
