package timeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/internal/outfile"
)

// The whole job of 'iotap timeline': arguments expanded (ExpandInputs),
// one Perfetto file or, over a size bound, an overview and detail windows
// (ExportFile), what the Perfetto UI will not open warned about, the
// summary printed (FileResult.WriteSummary).

// ErrStdinTwice is ExpandInputs' error when "-" (standard input) is given
// more than once.
var ErrStdinTwice = errors.New("- (standard input) may be given once")

// ExpandInputs expands directory arguments into the traces they hold (not
// recursively, DirInputs) and returns the clocks.json of the first
// directory that has one (""), also when it returns an error for a later
// argument. "-" (standard input) may be given once; a path that does not
// exist is an error.
func ExpandInputs(args []string) (inputs []string, clocks string, err error) {
	stdin := 0
	for _, a := range args {
		if a == "-" {
			if stdin++; stdin > 1 {
				return nil, clocks, ErrStdinTwice
			}
			inputs = append(inputs, a)
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, clocks, err
		}
		if !st.IsDir() {
			inputs = append(inputs, a)
			continue
		}
		traces, c, err := DirInputs(a)
		if clocks == "" {
			clocks = c
		}
		if err != nil {
			return nil, clocks, err
		}
		if len(traces) == 0 {
			return nil, clocks, fmt.Errorf("timeline: %s: no trace in this directory", a)
		}
		inputs = append(inputs, traces...)
	}
	return inputs, clocks, nil
}

// FileOptions says where and how ExportFile writes.
type FileOptions struct {
	// Out is the Perfetto file to write; "-" writes Stdout (one stream:
	// MaxSize must then be 0).
	Out    string
	Stdout io.Writer
	// MaxSize bounds every file written (ExportSplit; at least
	// MinMaxSize): above it Out is an overview and the detail is in
	// windows in DetailDir(Out). 0 writes one file whatever its size.
	MaxSize int64
	// Create creates the one file written when MaxSize is 0 (not for
	// "-"): commit makes it visible once complete. nil: a private file
	// (0600, never through a link nor over one of the inputs, written
	// under a temporary name and renamed by commit).
	Create func(path string, inputs []string) (w io.Writer, commit func() error, err error)
	// UILimit is the size above which the Perfetto UI is unlikely to
	// open a file (0: DefaultMaxSize). When MaxSize is 0 and the trace
	// is estimated early to be larger (EstimateSize), SizeWarning
	// receives the warning (SizeWarning's text) as it is known.
	UILimit     int64
	SizeWarning func(string)
}

// FileResult is what ExportFile wrote.
type FileResult struct {
	*Stats
	// Split is the result of the split export (MaxSize > 0), nil for
	// one file.
	Split *SplitStats
	// Out is FileOptions.Out.
	Out string
	// Warned: the trace was estimated early to be over the UI limit,
	// and FileOptions.SizeWarning told.
	Warned bool
	limit  int64
	one    bool // MaxSize 0
}

// ExportFile writes the Perfetto trace of the inputs (paths, as Export
// takes them) to fo.Out: as one file (Export), or with fo.MaxSize as an
// overview plus detail windows under the bound (ExportSplit). Errors of
// the export are wrapped as "timeline: ..."; an interrupted export (ctx
// cancelled) keeps the trace, ended validly with the events read so far,
// and returns the result with ctx's error. Otherwise a failed export
// leaves no file. The result is nil when nothing was exported.
func ExportFile(ctx context.Context, inputs []string, opt Options, fo FileOptions) (*FileResult, error) {
	limit := fo.UILimit
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	res := &FileResult{Out: fo.Out, limit: limit, one: fo.MaxSize == 0}
	if fo.Out != "-" && fo.MaxSize != 0 {
		// refused as the one file's create refuses it, before reading
		var ins outfile.Inputs
		ins.Add(inputs...)
		if err := outfile.Check(fo.Out, outfile.Options{Inputs: &ins}); err != nil {
			return nil, err
		}
		sst, err := ExportSplit(ctx, fo.Out, inputs, opt, SplitOptions{MaxSize: fo.MaxSize})
		if sst == nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
		res.Stats, res.Split = sst.Stats, sst
		if err != nil {
			return res, fmt.Errorf("timeline: %w", err)
		}
		return res, nil
	}
	create := fo.Create
	if create == nil {
		create = outfile.Creator(fo.Stdout)
	}
	w, commit, err := create(fo.Out, inputs)
	if err != nil {
		return nil, err
	}
	out := &outfile.Counter{W: w}
	if progress := opt.Progress; fo.Out != "-" {
		opt.Progress = func(read, total int64) {
			if progress != nil {
				progress(read, total)
			}
			if !res.Warned {
				if est, ok := EstimateSize(read, total, out.N); ok && est > limit {
					res.Warned = true
					if fo.SizeWarning != nil {
						fo.SizeWarning(SizeWarning(fo.Out, est, limit, true))
					}
				}
			}
		}
	}
	st, err := Export(ctx, out, inputs, opt)
	res.Stats = st
	switch {
	case err == nil:
		err = commit()
	case st != nil && st.Interrupted:
		// SIGINT/SIGTERM: the trace was ended validly with the events
		// read so far; keep it.
		if cerr := commit(); cerr != nil {
			err = cerr
		}
	default:
		if a, ok := w.(interface{ Abort() error }); ok && fo.Create == nil {
			a.Abort()
		}
	}
	if err != nil {
		if st == nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
		return res, fmt.Errorf("timeline: %w", err)
	}
	return res, nil
}

// SizeWarning is the warning about the size of the one file written
// (MaxSize 0, not "-"), over the UI limit: the full warning, or, when it
// was estimated early (Warned), a reminder. "" when there is none.
func (r *FileResult) SizeWarning() string {
	if !r.one || r.Out == "-" {
		return ""
	}
	fi, err := os.Stat(r.Out)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if !r.Warned {
		return SizeWarning(r.Out, fi.Size(), r.limit, false)
	}
	if fi.Size() > r.limit {
		return fmt.Sprintf("%s is %d MB, over the %d MB the Perfetto UI opens (see above)", r.Out, fi.Size()>>20, r.limit>>20)
	}
	return ""
}

// Written lists what an interrupted split export left (the overview and
// the windows' directory), for the message saying so; nil otherwise.
func (r *FileResult) Written() []string {
	sst := r.Split
	if sst == nil || sst.Stats == nil || !sst.Interrupted {
		return nil
	}
	var w []string
	if fi, err := os.Stat(r.Out); err == nil {
		w = append(w, fmt.Sprintf("%s (%d bytes, complete up to the interruption)", r.Out, fi.Size()))
	}
	if sst.Split {
		w = append(w, fmt.Sprintf("%s/ (%d windows)", sst.Dir, len(sst.Index.Windows)))
	}
	return w
}

// WriteSummary writes the summary of what was written: the table of
// Stats.WriteTable (with a split export's windows, SplitStats.WriteWindows)
// or, asJSON, the NDJSON records of Stats.AppendNDJSON.
func (r *FileResult) WriteSummary(w io.Writer, asJSON bool) error {
	if asJSON {
		_, err := w.Write(r.AppendNDJSON(nil, r.Split))
		return err
	}
	if r.Split != nil && r.Split.Split {
		r.WriteTable(w, r.Split.Dir+"/ (detail, all windows)")
		r.Split.WriteWindows(w, r.Out)
	} else {
		r.WriteTable(w, r.Out)
	}
	return nil
}
