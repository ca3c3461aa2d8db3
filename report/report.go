package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/timeline"
)

// Report is what Build found and summarised.
type Report struct {
	// Bundles lists the .tar.gz bundles read like directories.
	Bundles []Bundle
	// Traces lists the recognised traces, sorted by name.
	Traces []*Trace
	// Others lists the files that are not traces, with why.
	Others []Other
	// Clocks lists the clocks.json files found among the inputs.
	Clocks []File
	// Timelines lists the split timelines found among the inputs (an
	// overview with its X.d/index.json); the HTML page links the first
	// when the report writes no timeline itself (FoundTimelineLinks).
	Timelines []*FoundTimeline

	tmp *inputs
}

// Trace is one recognised trace and its summary.
type Trace struct {
	// Path is where the trace is read from; Name how the report names it
	// (BUNDLE:MEMBER for a member of a bundle, else Path).
	Path string
	Name string
	Kind
	// One of these is set, by Kind.Source, unless Err is set.
	USB    *USB
	MMIO   *MMIO
	PT     *PT
	Events *Events
	// Err is why the trace could not be summarised. It does not repeat
	// Path: print it after Name.
	Err error
	// Loss describes the data the trace records as lost, "" when none.
	Loss string
	// Span is the time of the first and last event on the trace's own
	// clock (nanoseconds); zero for PT.
	Span Span
	// OffsetNS maps the trace's clock onto the report's common clock
	// when Aligned (from a clocks.json beside the trace); otherwise the
	// trace is placed at 0 (OffsetNS = -Span.FirstNS).
	OffsetNS int64
	Aligned  bool

	index int // position in Report.Traces
}

// Status is "ok", "LOSS: ..." or "ERROR: ...".
func (t *Trace) Status() string {
	switch {
	case t.Err != nil:
		return "ERROR: " + t.Err.Error()
	case t.Loss != "":
		return "LOSS: " + t.Loss
	}
	return "ok"
}

// Span is the time range of a trace's events, nanoseconds.
type Span struct {
	FirstNS, LastNS int64
	Set             bool
}

func (s *Span) add(t int64) {
	if !s.Set {
		s.FirstNS, s.LastNS, s.Set = t, t, true
		return
	}
	s.FirstNS = min(s.FirstNS, t)
	s.LastNS = max(s.LastNS, t)
}

// Options tune Build; the zero value is the defaults of the stats verbs.
type Options struct {
	MMIO MMIOOptions
	PT   PTOptions
	// Clocks, when set, aligns every trace; otherwise a clocks.json
	// aligns the traces of its own directory.
	Clocks *timeline.Clocks
	// Stdin is read for the argument "-" (a trace or a bundle).
	Stdin io.Reader
	// Progress, when set, is called before each trace is read.
	Progress func(t *Trace)
	// Window, when set, restricts every trace to a time window (--from,
	// --to): each argument is replaced by its cut (cut.OpenWindow), on
	// each trace's own clock; Warn receives what the cuts warn of.
	Window timerange.Spec
	Warn   func(string)
}

// Build finds the traces among args (directories are walked recursively,
// .tar.gz bundles are read like directories, "-" is Options.Stdin, other
// files are taken as they are), recognises each by its content and summarises it. A trace
// that cannot be read has Trace.Err set; Build fails only when an
// argument cannot be read, a file named in args (not found in a
// directory or bundle) is no trace (a *detect.NotTraceError; a clocks.json
// or an index is taken as such), or ctx is cancelled. Close the report to remove
// the temporary copies of bundle members.
func Build(ctx context.Context, args []string, o Options) (*Report, error) {
	var win func(string) (*cut.Windowed, error)
	if o.Window.Set() {
		win = func(p string) (*cut.Windowed, error) { return cut.OpenWindow(ctx, p, o.Window, o.Warn) }
	}
	in, err := find(args, o.Stdin, win)
	if err != nil {
		return nil, err
	}
	if len(in.files) == 0 {
		in.cleanup()
		return nil, fmt.Errorf("%s: %w", strings.Join(args, ", "), ErrNothing)
	}
	r := &Report{Bundles: in.bundles, tmp: in}
	clocks := map[string]*timeline.Clocks{} // by directory
	for _, f := range in.files {
		if err := ctx.Err(); err != nil {
			r.Close()
			return nil, err
		}
		k, err := SniffFileErr(f.Path)
		if err != nil && !errors.Is(err, detect.ErrNotTrace) {
			// Unreadable is an error, not "not a trace".
			r.Traces = append(r.Traces, &Trace{Path: f.Path, Name: f.Name, Kind: Kind{"unreadable", "unreadable file"}, Err: err, index: len(r.Traces)})
			continue
		}
		if err != nil {
			if filepath.Base(f.Path) == "clocks.json" {
				r.Clocks = append(r.Clocks, f)
				if c, err := timeline.LoadClocks(f.Path); err == nil {
					clocks[filepath.Dir(f.Path)] = c
				}
			}
			why := notTraceReason(err)
			if nt := (*detect.NotTraceError)(nil); f.named && errors.As(err, &nt) && filepath.Base(f.Path) != "clocks.json" && !strings.HasSuffix(f.Path, cut.IndexSuffix) {
				// a file named to be read that is no trace: an error, as
				// the readers say it (a directory lists what it skipped)
				r.Close()
				return nil, fmt.Errorf("%s: %w", f.Name, nt)
			}
			if filepath.Base(f.Path) == "clocks.json" {
				why = "clocks file (aligns the traces of its directory)"
			}
			if strings.HasSuffix(f.Path, cut.IndexSuffix) {
				why = indexWhy(f.Path)
			}
			if filepath.Base(f.Path) == "index.json" && strings.HasSuffix(filepath.Dir(f.Path), ".d") {
				if ft, err := loadFoundTimeline(f.Path); err != nil {
					why = "index.json of a detail directory, not used: " + err.Error()
				} else {
					r.Timelines = append(r.Timelines, ft)
					why = fmt.Sprintf("index of a split timeline: %s and %d windows (the HTML page links them)", filepath.Base(ft.Overview), len(ft.Index.Windows))
				}
			}
			r.Others = append(r.Others, Other{Name: f.Name, Why: why})
			continue
		}
		t := &Trace{Path: f.Path, Name: f.Name, Kind: k, index: len(r.Traces)}
		if o.Progress != nil {
			o.Progress(t)
		}
		var sp *Span
		switch k.Source {
		case "usb":
			t.USB, sp, t.Err = analyzeUSBFile(ctx, f.Path)
			t.Err = unnamed(t.Err, f.Path) // the trace's name says it (FirstError)
			if t.USB != nil {
				t.Loss = t.USB.Loss
			}
		case "mmio":
			t.MMIO, sp, t.Err = AnalyzeMMIO(ctx, f.Path, o.MMIO)
			if t.MMIO != nil {
				t.Loss = t.MMIO.Loss
			}
		case "pt":
			t.PT, t.Err = AnalyzePT(ctx, f.Path, o.PT)
			t.Err = unnamed(t.Err, f.Path)
			if t.PT != nil {
				t.Loss = t.PT.Loss
			}
		case "events":
			t.Events, sp, t.Loss, t.Err = analyzeEventsFile(ctx, f.Path, k.Format)
		}
		if err := ctx.Err(); err != nil {
			r.Close()
			return nil, err
		}
		if msg := in.truncated(f.Path); msg != "" && t.Err == nil {
			if t.Loss != "" {
				msg = t.Loss + "; " + msg
			}
			t.Loss = msg
		}
		if sp != nil {
			t.Span = *sp
		}
		r.Traces = append(r.Traces, t)
	}
	for _, t := range r.Traces {
		c := o.Clocks
		if c == nil {
			c = clocks[filepath.Dir(t.Path)]
		}
		t.OffsetNS = -t.Span.FirstNS
		if c == nil {
			continue
		}
		sc, ok := c.Sources[filepath.Base(t.Path)]
		if !ok {
			sc, ok = c.Sources[t.Source]
		}
		if ok && t.Source != "pt" {
			t.OffsetNS, t.Aligned = sc.OffsetNS, true
		}
	}
	return r, nil
}

// indexWhy says what an index file (FILE.iotapidx) is for, and whether it
// is current: a stale or damaged one is ignored by cut and timeline.
func indexWhy(path string) string {
	trace := strings.TrimSuffix(path, cut.IndexSuffix)
	why := "index of " + filepath.Base(trace)
	var warned string
	in, closer, err := cut.OpenFile(trace, true, func(m string) { warned = m })
	if err != nil {
		return why + ": its trace cannot be read: " + err.Error()
	}
	defer closer.Close()
	if in.Index == nil {
		if warned == "" {
			warned = "unreadable"
		}
		return why + " (ignored: " + strings.TrimPrefix(warned, path+": index ignored: ") + "; 'iotap index' rewrites it)"
	}
	if err := cut.CheckIndex(in); err != nil {
		return why + " (ignored: " + err.Error() + "; 'iotap index' rewrites it)"
	}
	if in.Index.Partial {
		return why + " (partial: the first " + fmt.Sprint(in.Index.Size) + " bytes, as a capture that was stopped left it; seeks by time: iotap cut, timeline --from)"
	}
	return why + " (current; seeks by time: iotap cut, timeline --from)"
}

// Close removes the temporary copies of bundle members.
func (r *Report) Close() error {
	if r.tmp != nil {
		r.tmp.cleanup()
		r.tmp = nil
	}
	return nil
}

// ErrNothing is Build's error when its arguments hold no file at all (an
// empty directory or bundle): there is nothing to report.
var ErrNothing = errors.New("nothing to report: no files found")

// LossError is why a report ends with exit 3: which of its traces record
// lost data, "N of M traces record lost data: NAME, NAME"; "" when none.
func (r *Report) LossError() string {
	var names []string
	for _, t := range r.Traces {
		if t.Err == nil && t.Loss != "" {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d traces record lost data: %s", len(names), len(r.Traces), strings.Join(names, ", "))
}

// Lossy counts the traces that record lost data.
func (r *Report) Lossy() int {
	n := 0
	for _, t := range r.Traces {
		if t.Err == nil && t.Loss != "" {
			n++
		}
	}
	return n
}

// unnamedError is an error of AnalyzePT without the input's path: a
// Trace's Name goes next to its Err wherever it is printed, and the path
// of standard input or a named pipe is a temporary copy the user never
// named.
type unnamedError struct {
	msg string
	err error
}

func (e *unnamedError) Error() string { return e.msg }
func (e *unnamedError) Unwrap() error { return e.err }

// unnamed drops the first "path: " from err's message (nil stays nil).
func unnamed(err error, path string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	before, after, ok := strings.Cut(msg, path+": ")
	if !ok {
		return err
	}
	return &unnamedError{msg: before + after, err: err}
}

// FirstError returns the first trace that could not be read, nil if none.
func (r *Report) FirstError() *Trace {
	for _, t := range r.Traces {
		if t.Err != nil {
			return t
		}
	}
	return nil
}

// TextOptions tune WriteText.
type TextOptions struct {
	// Unidentified is printed for a USB device whose identity the
	// capture does not hold.
	Unidentified string
	// Fold lists the USB devices without identity on one line per trace.
	Fold bool
	// Raw prints latencies as 'iotap usb stats' does (every digit, a p99
	// even of a handful of transfers) instead of with the precision they
	// have.
	Raw bool
}

// WriteText prints the report for people: per trace the summary of its
// source's stats verb, then a table of all traces and the files that are
// not traces.
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	for _, b := range r.Bundles {
		fmt.Fprintf(w, "== bundle %s: %s\n", b.Path, strings.Join(b.Members, " "))
	}
	for _, t := range r.Traces {
		fmt.Fprintf(w, "== %s: %s (%s)\n", t.Name, t.Source, t.Format)
		if t.Err == nil {
			if err := t.writeText(w, o); err != nil {
				return err
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "== summary: %d traces\n", len(r.Traces))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range r.Traces {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Source, t.Format, t.Name, t.Status())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Others) > 0 {
		fmt.Fprintf(w, "not traces (%d):\n", len(r.Others))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, o := range r.Others {
			fmt.Fprintf(tw, "  %s\t%s\n", o.Name, o.Why)
		}
		return tw.Flush()
	}
	return nil
}

// Other is a file among the inputs that is not a trace.
type Other struct {
	Name string `json:"name"`
	// Why says what the file looks like and why it is not a trace
	// ("text (line 1 is not a usbmon, mmiotrace or user_events record: ...)").
	Why string `json:"why"`
}

// notTraceReason is the reason of a detect.ErrNotTrace error, without the
// path and the "not a trace: " prefix.
func notTraceReason(err error) string {
	var nt *detect.NotTraceError
	if errors.As(err, &nt) {
		return nt.Reason()
	}
	return err.Error()
}

func (t *Trace) writeText(w io.Writer, o TextOptions) error {
	switch {
	case t.USB != nil:
		return WriteUSBTable(w, t.USB.Stats, t.USB.Pairs, t.USB.IDs, USBTableOptions{Unidentified: o.Unidentified, Fold: o.Fold, Honest: !o.Raw})
	case t.MMIO != nil:
		WriteMMIOText(w, t.MMIO.Stats, t.MMIO.Name, MMIOTextOptions{})
	case t.PT != nil:
		for _, s := range t.PT.Streams {
			WritePTText(w, s.Name, &s.Stats)
		}
	case t.Events != nil:
		WriteEventsText(w, t.Events)
	}
	return nil
}
