package userevents

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/internal/timerange"
)

// ReadJob is 'iotap events read': the tracepoint samples of one
// perf.data file that a display filter and a time window keep, as text
// or NDJSON.
type ReadJob struct {
	Path   string         // the perf.data file; "-" is standard input (OpenPerfData)
	Filter string         // a display filter (ParseFilter, -Y); "" keeps every sample
	Window timerange.Spec // the samples' window on their clock (KeepWindow); unset: all
	JSON   bool           // NDJSON: the input record, then a record per sample
	keep   func(*Recorded) bool
	win    timerange.Window // Window placed on the file (Prepare)
	end    int64            // the time of the latest sample Run read
	seen   bool             // Run read a sample
}

// Prepare checks Filter and places Window on the file, before anything
// is opened for output. A bad Filter is an *ArgError with Arg "filter"
// (its message says -Y), a window that does not resolve one with Arg
// "window" (naming the file, PerfDataWindow); a file that is no
// perf.data is a *PerfDataError, named, and any other error reading the
// file is returned as it is.
func (j *ReadJob) Prepare(ctx context.Context) error {
	var keep func(*Recorded) bool
	if j.Filter != "" {
		k, err := ParseFilter(j.Filter)
		if err != nil {
			return &ArgError{"filter", fmt.Errorf("-Y: %w", err)}
		}
		keep = k
	}
	if j.Window.Set() {
		win, err := PerfDataWindow(ctx, j.Path, j.Window)
		if err != nil {
			return err // named by PerfDataWindow, as is a window that does not resolve
		}
		inner := keep
		keep = func(r *Recorded) bool {
			if ts := int64(r.TS); !j.seen || ts > j.end {
				j.end, j.seen = ts, true // the latest: perf.data's samples come in per-CPU rounds
			}
			return win.Contains(int64(r.TS)) && (inner == nil || inner(r))
		}
		j.win = win
	}
	j.keep = keep
	return nil
}

// PastEnd is what 'iotap events read' says when Run read the file to its
// end and the Window starts after its latest sample: the window holds no
// sample because the file ended before it (timerange.PastEndMessage, as
// cut and the other readers say it); "" otherwise.
func (j *ReadJob) PastEnd() string {
	if !j.seen || !j.win.HasFrom || j.end >= j.win.From {
		return ""
	}
	return timerange.PastEndMessage(j.Path, j.Window)
}

// Open opens j.Path (OpenPerfData, whose errors name the file).
func (j *ReadJob) Open() (*PerfDataReader, error) { return OpenPerfData(j.Path) }

// named names j.Path in a *PerfDataError (which names no file) as
// OpenPerfData does; other errors are returned as they are.
func (j *ReadJob) named(err error) error {
	if pe := (*PerfDataError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", j.Path, err)
	}
	return err
}

// Run writes the samples of r (the file j.Path, opened with
// Open) that j keeps to w, after the input record when JSON, and
// returns the number of samples written (PerfDataReader.CopyTo: r's
// Stats, Warnings and Errors tell what was lost). Prepare must have
// succeeded.
func (j *ReadJob) Run(ctx context.Context, r *PerfDataReader, w io.Writer) (uint64, error) {
	if j.JSON {
		if _, err := w.Write(AppendNDJSONInput(nil, j.Path, FormatPerfData, ClockPerf)); err != nil {
			return 0, err
		}
	}
	n, err := r.CopyTo(ctx, w, CopyOptions{JSON: j.JSON, Keep: j.keep})
	return n, j.named(err)
}

// Loss says what the file lost, as 'iotap events read' reports it:
// samples the kernel lost and samples that did not decode; "" when
// nothing was.
func (s PerfDataStats) Loss() string {
	if s.Lost == 0 && s.Bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d event(s) lost, %d undecodable", s.Lost, s.Bad)
}

// NDJSONPipe is the perf.data of tracepoints at a path read as 'iotap
// events read --json' prints it (ReadJob with JSON), for a reader of
// that NDJSON (report, timeline): Read returns the records, then the
// reading's error if it failed; Close stops the reading; Stats, after
// the end or Close, says what the file lost.
type NDJSONPipe struct {
	*io.PipeReader
	r    *PerfDataReader
	done chan struct{}
}

// OpenNDJSON starts reading the perf.data at path (ReadJob, Path and
// JSON set) into the NDJSONPipe it returns. Its errors name the file.
func OpenNDJSON(ctx context.Context, path string) (*NDJSONPipe, error) {
	job := ReadJob{Path: path, JSON: true}
	if err := job.Prepare(ctx); err != nil {
		return nil, err
	}
	r, err := job.Open()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	p := &NDJSONPipe{PipeReader: pr, r: r, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_, err := job.Run(ctx, r, pw)
		pw.CloseWithError(err)
	}()
	return p, nil
}

// Close stops the reading, waits for it to end and closes the file.
func (p *NDJSONPipe) Close() error {
	p.PipeReader.Close()
	<-p.done
	return p.r.Close()
}

// Stats is what the reader saw (PerfDataReader.Stats); call it after
// Close, or after Read returned io.EOF.
func (p *NDJSONPipe) Stats() PerfDataStats { return p.r.Stats() }
