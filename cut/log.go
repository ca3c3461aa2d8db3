package cut

import (
	"context"
	"io"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/mmiotrace"
)

// Log is an mmiotrace log read as 'iotap mmio filter' and 'iotap mmio
// replay' read it (OpenLog): the whole log, or the cut of a time window
// (the VERSION, PCIDEV and MAP records before the window kept, so its
// accesses are located as in the log).
type Log struct {
	*Reader
	// File is the log's name as given ("-": standard input).
	File string
	// Format is the log's format as an "input" record names it
	// (detect.Input.Format; a window's cut is a plain "mmiotrace log").
	Format string
	// window, for standard input (not cut): the records Filter keeps.
	window *timerange.Window
}

// LogOptions say which part of a log OpenLog reads.
type LogOptions struct {
	// Window is the part to read; unset: the whole log.
	Window timerange.Spec
	// Stamps reads a window of standard input, which cannot be cut (it
	// is read once), whole: Filter keeps the window's records by their
	// stamps, and the window's ends must be @T (else a *WindowError
	// wrapping ErrWindowNeedsFile). Without it such a window is refused
	// as OpenStream refuses standard input.
	Stamps bool
	// Warn receives what is wrong with the log's index.
	Warn func(string)
}

// OpenLog opens the mmiotrace log at path ("-": standard input): with
// opt.Window set, its window's cut, read in-process (OpenReader: the
// input is checked to be a log first, a window that does not resolve is
// a *WindowError); else the whole log (detect.OpenTrace). Anything but a
// log is refused with an error saying what it is. Close it when done.
func OpenLog(ctx context.Context, path string, opt LogOptions) (*Log, error) {
	l := &Log{File: path}
	spec := opt.Window
	if spec.Set() && path == "-" && opt.Stamps {
		win, err := ResolveWindow(ctx, path, spec, nil)
		if err != nil {
			if _, ok := err.(*WindowError); !ok {
				err = &WindowError{Err: err}
			}
			return nil, err
		}
		l.window, spec = &win, timerange.Spec{}
	}
	r, err := OpenReader(ctx, path, detect.MMIO, spec, opt.Warn)
	if err != nil {
		return nil, err
	}
	l.Reader = r
	if r.Input != nil {
		l.Format = r.Input.Format()
	} else {
		l.Format = "mmiotrace log"
	}
	return l, nil
}

// Loss is msgs, what reading the log lost (mmiotrace.FilterStats.Loss...),
// followed by what a window's cut leaves out (Reader.Loss). Call it
// after the end.
func (l *Log) Loss(msgs []string) []string {
	return append(msgs, l.Reader.Loss()...)
}

// Filter writes the records of the log that f selects to w
// (mmiotrace.FilterLog; the window of standard input read with
// LogOptions.Stamps is added to f's criteria, f itself is not changed)
// and returns what the filter counted and what the log lost (Loss).
func (l *Log) Filter(ctx context.Context, w io.Writer, f *mmiotrace.Filter, opt mmiotrace.FilterOptions) (mmiotrace.FilterStats, []string, error) {
	if win := l.window; win != nil {
		g := *f
		g.HasStart, g.Start, g.HasEnd, g.End = win.HasFrom, uint64(win.From), win.HasTo, uint64(win.To)
		f = &g
	}
	st, err := mmiotrace.FilterLog(ctx, l.Reader.Reader, w, f, opt)
	if err != nil {
		return st, nil, mmiotrace.NamedFormatError(l.File, err) // a bad line names the log
	}
	return st, l.Loss(st.Loss()), nil
}

// Replay replays the log as a (mmiotrace.ReplayArgs.Replay) with opt
// and prints it with pr, after the log's "input" record
// (ReplayPrinter.Input). The stats' Loss includes what a window's cut
// leaves out.
func (l *Log) Replay(ctx context.Context, a *mmiotrace.ReplayArgs, opt mmiotrace.ReplayOptions, pr *mmiotrace.ReplayPrinter) (mmiotrace.ReplayStats, error) {
	pr.Input(l.File, l.Format)
	st, err := a.Replay(ctx, l.Reader.Reader, opt, pr)
	if err != nil {
		return st, err
	}
	st.Loss = l.Loss(st.Loss)
	return st, nil
}
