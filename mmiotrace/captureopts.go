package mmiotrace

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/tracefs"
)

// CaptureOptions configures Capture.
type CaptureOptions struct {
	FS          *tracefs.FS // nil: tracefs.Find()
	Sysfs       Sysfs       // zero: DefaultSysfs
	BufferKB    int         // per-CPU ring buffer size; 0 keeps the current one
	Force       bool        // replace another active tracer
	OfflineCPUs bool        // take all CPUs but the first offline while tracing
	Marks       []string    // markers written once tracing runs
	MarkerFIFO  string      // named pipe: each line written to it becomes a marker
	// MarkerSocket is a unix stream socket created (mode 0600) for the
	// capture and removed afterwards: each line a client writes becomes
	// a marker; several clients may connect, one after another or at once.
	MarkerSocket string
	Bind         *PCIAddr // unbind before tracing, bind while tracing
	BindDriver   string   // driver to bind to; "" the one it had, or drivers_probe
	Command      []string // run while tracing (after Bind)
	// CommandStdout and CommandStderr receive the command's output.
	CommandStdout, CommandStderr io.Writer
	// Logf receives progress and warnings (nil: discarded).
	Logf func(format string, args ...any)
	// Interval, if > 0, calls OnInterval every Interval with the records
	// (lines but VERSION and PCIDEV) and their bytes written in it, as
	// perf stat -I does, and once more at the end with the last, partial
	// interval: the intervals add up to the log's records. OnInterval runs
	// on a goroutine of its own, never concurrently.
	Interval   time.Duration
	OnInterval func(rotate.Stats)
}

// CaptureResult describes a finished capture.
type CaptureResult struct {
	Bytes      int64  // log bytes written
	Lines      int64  // log lines written
	LostMarks  uint64 // sum of the kernel's "Lost N events." marks
	Overruns   uint64 // per-CPU ring buffer overruns and drops (per_cpu/cpuN/stats)
	BufferKB   int    // per-CPU buffer size used
	OnlineCPUs int    // CPUs online while tracing
	CommandErr error  // the command's failure, if any
}

// Lost returns the number of events known to be lost.
func (r CaptureResult) Lost() uint64 { return max(r.LostMarks, r.Overruns) }

// SuggestBufferKB returns a buffer size to retry with after losses: room
// for the lost events (about 64 bytes each in the ring buffer) on top of
// the current size, doubled for margin, rounded up to a power of two.
func (r CaptureResult) SuggestBufferKB() int {
	kb := max(r.BufferKB, 1)
	need := kb + int((r.Lost()*64+1023)/1024)
	s := 1
	for s < 2*need {
		s *= 2
	}
	return max(s, 2*kb)
}

func (o *CaptureOptions) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// FileCaptureOptions configure CaptureToFile: a Capture written to a log
// file or a ring of log files, and optionally a bundle.
type FileCaptureOptions struct {
	Capture CaptureOptions
	// Path is the log file ("-" is standard output when Create allows
	// it). Create opens it (nil: CreateLog, mode 0600, compressed as its
	// name says); its Close completes the file.
	Path   string
	Create func(path string) (io.WriteCloser, error)
	// Rotate, if set, splits the log into a ring of files
	// (NewRotatingLog; its Create, nil: CreateLog, opens each file).
	// Path and Create above are then not used.
	Rotate *rotate.Options
	// Bundle, if set, is written once the log is complete: a tar.gz with
	// the log and what names its accesses (WriteBundleWarn). It needs the
	// log in one file (not standard output, not Rotate).
	Bundle string
	// Warn receives warnings about the bundle (nil: discarded).
	Warn func(string)
}

// FileCaptureResult is what CaptureToFile did.
type FileCaptureResult struct {
	CaptureResult
	// Files are the log files written: Path, or with Rotate the files of
	// the ring kept, oldest first.
	Files []string
}

// LossText describes the events lost, or "" when none were: how many, by
// which count, and the buffer size they were lost with (SuggestBufferKB
// gives the size to retry with).
func (r CaptureResult) LossText() string {
	lost := r.Lost()
	if lost == 0 {
		return ""
	}
	return fmt.Sprintf("mmiotrace lost %d events (%d in \"Lost N events.\" marks, %d ring-buffer overruns) with %d KiB per CPU",
		lost, r.LostMarks, r.Overruns, r.BufferKB)
}

// CaptureArgs are the options of 'iotap mmio capture' in the form its
// flags give them: the flags fill Capture's fields directly (--buffer-kb,
// --force, --offline-cpus, --mark, --marker-fifo, --marker-socket,
// --driver) and the fields below; FileOptions checks them, and its errors
// name the flags.
type CaptureArgs struct {
	Capture CaptureOptions
	Path    string // -o: the log file, "-" for standard output
	Bind    string // --bind: the PCI device, DDDD:BB:DD.F
	Bundle  string // --bundle: the tar.gz to write
	TraceFS string // --tracefs: the tracefs mount ("": found)
}

// FileOptions checks a and the rotation flags rot, and returns the
// options of CaptureToFile: the log in a ring of files when rot asks for
// one, Capture.Interval rot's.
func (a CaptureArgs) FileOptions(rot rotate.Args) (FileCaptureOptions, error) {
	o := FileCaptureOptions{Capture: a.Capture, Path: a.Path, Bundle: a.Bundle}
	c := &o.Capture
	switch {
	case a.Path == "":
		return o, errors.New("capture needs -o FILE")
	case a.Bundle != "" && a.Path == "-":
		return o, errors.New("--bundle needs the log in a file (-o FILE)")
	case c.BufferKB < 0:
		return o, fmt.Errorf("--buffer-kb %d: must be positive", c.BufferKB)
	}
	if a.Bind != "" {
		addr, err := ParsePCIAddr(a.Bind)
		if err != nil {
			return o, fmt.Errorf("--bind: %v", err)
		}
		c.Bind = &addr
	}
	if c.BindDriver != "" && !ValidDriverName(c.BindDriver) {
		return o, fmt.Errorf("--driver %q: not a driver name", c.BindDriver)
	}
	if a.TraceFS != "" {
		c.FS = tracefs.New(a.TraceFS)
	}
	var err error
	if o.Rotate, err = rot.Options(a.Path); err != nil {
		return o, err
	}
	if o.Rotate != nil && a.Bundle != "" {
		return o, errors.New("--bundle needs the log in one file, not --file-size/--file-duration")
	}
	c.Interval = rot.Interval
	return o, nil
}

// Compressed returns create with each file compressed as its name says
// (CompressionFromName: .gz, .xz, .zst): the writer's Close ends the
// compressed stream, then closes the file. It is the Create of
// FileCaptureOptions for files created by other means than CreateLog.
func Compressed(create func(path string) (io.WriteCloser, error)) func(path string) (io.WriteCloser, error) {
	return func(path string) (io.WriteCloser, error) {
		f, err := create(path)
		if err != nil {
			return nil, err
		}
		zw, err := NewCompressWriter(f, CompressionFromName(path))
		if err != nil {
			if a, ok := f.(interface{ Abort() error }); ok {
				a.Abort()
			}
			return nil, err
		}
		return compressedFile{zw, f}, nil
	}
}

// compressedFile is a compressor over its file.
type compressedFile struct {
	io.WriteCloser           // the compressor (or pass-through)
	f              io.Closer // the file
}

func (c compressedFile) Close() error {
	if err := c.WriteCloser.Close(); err != nil {
		return err
	}
	return c.f.Close()
}
