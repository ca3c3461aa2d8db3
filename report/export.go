package report

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/timeline"
)

// TimelineOptions are the options of Report.WriteTimeline ('iotap report
// -o FILE.pftrace').
type TimelineOptions struct {
	// Out is the Perfetto file (timeline.FileOptions.Out).
	Out string
	// ClocksFile, when set, is the clocks file that aligns every trace
	// (--clocks); otherwise each clocks.json found among the inputs
	// aligns the traces of its directory (Report.InputClocks).
	ClocksFile string
	// Verbose passes every warning to Warn as it comes; otherwise they
	// are folded (FoldWarnings) and passed at the end. Warnings name the
	// traces as the report does (Trace.Name, not the path read).
	Verbose bool
	Warn    func(string)
	// Export writes the trace of inputs with opt, the options the report
	// sets (FileClocks and Warn). nil: timeline.ExportFile(ctx, inputs,
	// opt, timeline.FileOptions{Out: Out}).
	Export func(ctx context.Context, inputs []string, opt timeline.Options) (*timeline.FileResult, error)
}

// WriteTimeline writes the Perfetto trace of the report's readable traces
// (the USB, MMIO, user_events and Intel PT ones) and tells w what it did:
// the traces left out, the clocks used, then the summary table
// (timeline.FileResult.WriteSummary) with the traces named as the report
// names them. The result says what was written (for the HTML page's links,
// NewTimelineLinks).
func (r *Report) WriteTimeline(ctx context.Context, w io.Writer, o TimelineOptions) (*timeline.FileResult, error) {
	var inputs, skipped []string
	names := map[string]string{} // path read -> name shown
	for _, t := range r.Traces {
		names[t.Path] = t.Name
		switch {
		case t.Err != nil:
			skipped = append(skipped, t.Name+" (unreadable)")
		default:
			inputs = append(inputs, t.Path)
		}
	}
	fmt.Fprintf(w, "\n== timeline: %s\n", o.Out)
	for _, s := range skipped {
		fmt.Fprintf(w, "not in the timeline: %s\n", s)
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("report: no trace to put in %s", o.Out)
	}
	opt := timeline.Options{InputName: func(p string) string { return names[p] }}
	if o.ClocksFile != "" {
		fmt.Fprintf(w, "clocks: %s (all inputs)\n", o.ClocksFile)
	} else {
		ic, err := r.InputClocks()
		if err != nil {
			return nil, err
		}
		for _, p := range r.Clocks {
			fmt.Fprintf(w, "clocks: %s (the traces of %s)\n", p.Name, filepath.Dir(p.Name))
		}
		if len(ic) > 0 {
			opt.FileClocks = func(p string) *timeline.Clocks { return ic[p] }
		}
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	var warnings []string
	opt.Warn = func(s string) {
		for p, n := range names {
			if p != n {
				s = strings.ReplaceAll(s, p, n)
			}
		}
		if o.Verbose {
			warn(s)
		}
		warnings = append(warnings, s)
	}
	export := o.Export
	if export == nil {
		export = func(ctx context.Context, inputs []string, opt timeline.Options) (*timeline.FileResult, error) {
			return timeline.ExportFile(ctx, inputs, opt, timeline.FileOptions{Out: o.Out})
		}
	}
	res, err := export(ctx, inputs, opt)
	if err != nil {
		return nil, err
	}
	for i := range res.Inputs {
		if n, ok := names[res.Inputs[i].Path]; ok {
			res.Inputs[i].Path = n
		}
	}
	if err := res.WriteSummary(w, false); err != nil {
		return nil, err
	}
	if !o.Verbose {
		for _, s := range FoldWarnings(warnings) {
			warn(s)
		}
	}
	return res, nil
}

// The kinds of file 'iotap report -o' writes: the HTML page (WriteHTML),
// a Perfetto trace (WriteTimeline), the NDJSON report (WriteJSON).
const (
	OutputHTML     = "html"
	OutputPerfetto = "perfetto"
	OutputJSON     = "json"
)

// OutputKind is the kind of report file path's extension names: .html or
// .htm, .pftrace or .perfetto-trace, .json or .ndjson (any case); ""
// for any other.
func OutputKind(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		return OutputHTML
	case ".pftrace", ".perfetto-trace":
		return OutputPerfetto
	case ".json", ".ndjson":
		return OutputJSON
	}
	return ""
}

// OutputTitle names the file of kind in what the report says it wrote:
// "HTML report", "NDJSON report", "Perfetto trace".
func OutputTitle(kind string) string {
	return map[string]string{OutputHTML: "HTML report", OutputJSON: "NDJSON report", OutputPerfetto: "Perfetto trace"}[kind]
}

// WriteOutput writes the report file of kind OutputHTML (WriteHTML) or
// OutputJSON (WriteJSON) to w; page is where the file is written. The
// HTML page links the timeline tl wrote with the report, or when there is
// none (nil, or one written to standard output) a split timeline found
// among the inputs (FoundTimelineLinks); ho gives its other options.
func (r *Report) WriteOutput(w io.Writer, kind, page string, tl *timeline.FileResult, ho HTMLOptions) error {
	switch kind {
	case OutputHTML:
		if tl != nil && tl.Out != "-" {
			ho.Timeline = NewTimelineLinks(page, tl.Out, tl.Split)
		} else {
			ho.Timeline = r.FoundTimelineLinks(page)
		}
		return r.WriteHTML(w, ho)
	case OutputJSON:
		return r.WriteJSON(w)
	}
	return fmt.Errorf("report: %s: cannot write a %q output here", page, kind)
}

// ByteProgress returns an Options.Progress that calls update with the
// bytes of the traces read before the one starting (by their files'
// sizes) and a status naming it ("trace N: NAME").
func ByteProgress(update func(done int64, status string)) func(*Trace) {
	var done, last int64
	n := 0
	return func(t *Trace) {
		done += last
		last = 0 // standard input, or a trace that cannot be stat'ed: its size is unknown
		if fi, err := os.Stat(t.Path); err == nil {
			last = fi.Size()
		}
		n++
		update(done, fmt.Sprintf("trace %d: %s", n, t.Name))
	}
}

// FileOptions are how WriteFiles writes the report's files.
type FileOptions struct {
	// Create creates the file at path (written from inputs, which it must
	// not overwrite); commit makes it complete. nil: a private file
	// (0600, never through a link nor over an input, renamed into place
	// by commit).
	Create func(path string, inputs []string) (w io.Writer, commit func() error, err error)
	// Timeline gives the Perfetto traces' options (Out is set per file);
	// Export, when set, replaces its Export, with the file to write.
	Timeline TimelineOptions
	Export   func(ctx context.Context, out string, inputs []string, opt timeline.Options) (*timeline.FileResult, error)
	// HTML gives the HTML pages' options (Timeline is set by WriteFiles).
	HTML HTMLOptions
}

// WriteFiles writes each of paths as the report file of kinds[i]
// (OutputKind): the Perfetto traces first (WriteTimeline), so that the
// HTML pages link the timeline written with them, then the HTML pages and
// NDJSON files (WriteOutput), each told on w ("== HTML report: PATH, N
// bytes"). The files are written from the report's traces.
func (r *Report) WriteFiles(ctx context.Context, w io.Writer, paths, kinds []string, o FileOptions) error {
	var inputs []string
	for _, t := range r.Traces {
		inputs = append(inputs, t.Path)
	}
	create := o.Create
	if create == nil {
		create = outfile.Creator(nil)
	}
	var tl *timeline.FileResult
	for i, path := range paths {
		if kinds[i] == OutputPerfetto {
			to := o.Timeline
			to.Out = path
			if o.Export != nil {
				to.Export = func(ctx context.Context, inputs []string, opt timeline.Options) (*timeline.FileResult, error) {
					return o.Export(ctx, path, inputs, opt)
				}
			}
			var err error
			if tl, err = r.WriteTimeline(ctx, w, to); err != nil {
				return err
			}
		}
	}
	for i, path := range paths {
		if kinds[i] == OutputPerfetto {
			continue
		}
		if kinds[i] != OutputHTML && kinds[i] != OutputJSON {
			return fmt.Errorf("report: %s: cannot write a %q output here", path, kinds[i])
		}
		f, commit, err := create(path, inputs)
		if err != nil {
			return err
		}
		cw := &outfile.Counter{W: f}
		if err = r.WriteOutput(cw, kinds[i], path, tl, o.HTML); err == nil {
			err = commit()
		}
		if err != nil {
			if a, ok := f.(interface{ Abort() error }); ok {
				a.Abort() // neither the file nor its temporary is left
			}
			return fmt.Errorf("report: %s: %w", path, err)
		}
		fmt.Fprintf(w, "\n== %s: %s, %d bytes\n", OutputTitle(kinds[i]), path, cw.N)
	}
	return nil
}
