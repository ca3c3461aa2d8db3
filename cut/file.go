package cut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/compress"
	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/internal/timerange"
)

// OpenFile opens a trace file for Cut or BuildIndex. A plain file is read
// at offsets (ReaderAt); a gzip, xz or zstd file is decompressed from its
// start at each pass (it cannot be seeked). When useIndex is set and the
// sidecar path+IndexSuffix exists, it is loaded into Input.Index; one that
// cannot be read is reported to warn and ignored. A raw Intel PT buffer of
// an 'iotap pt capture' directory is timed with its capture.json
// (Input.PT). Close the returned
// closer when done.
func OpenFile(path string, useIndex bool, warn func(string)) (Input, io.Closer, error) {
	if path == "-" || path == "" {
		return Input{}, nil, errors.New("cut reads its input more than once: give a file, not standard input")
	}
	f, err := detect.Open(path)
	if err != nil {
		return Input{}, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return Input{}, nil, detect.ReadError(path, err)
	}
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	in := Input{Name: path}
	if ci, _, ok := intelpt.CaptureInfoOf(path); ok {
		// a buffer of an 'iotap pt capture' directory: its timing
		in.PT = &PTTiming{Config: ci.DecoderConfig()}
		if ci.TSC != nil {
			in.PT.ToNS = ci.TSC.ToNS
		}
	}
	if c := compress.Detect(head[:n]); c != compress.None {
		if !st.Mode().IsRegular() {
			f.Close()
			return Input{}, nil, fmt.Errorf("%s: a compressed stream is read more than once: give a file", path)
		}
		in.Open = func() (io.ReadCloser, error) {
			g, err := detect.Open(path)
			if err != nil {
				return nil, err
			}
			r, _, release, err := compress.Decompress(g)
			if err != nil {
				g.Close()
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return &decompressed{r, func() { release(); g.Close() }}, nil
		}
	} else {
		if !st.Mode().IsRegular() {
			f.Close()
			return Input{}, nil, fmt.Errorf("%s is not a regular file: cut reads its input more than once", path)
		}
		// Read at offsets up to the size now: a file cut shorter while
		// it is read ends in an error, not early (mapfile.ReaderAt).
		in.ReaderAt, in.Size = mapfile.NewReaderAt(f, path)
		in.ModTime = st.ModTime().UnixNano()
	}
	if useIndex {
		ix, err := LoadIndex(path + IndexSuffix)
		switch {
		case err == nil:
			in.Index = ix
		case errors.Is(err, fs.ErrNotExist):
		default:
			if warn != nil {
				warn(fmt.Sprintf("%s%s: index ignored: %v", path, IndexSuffix, err))
			}
		}
	}
	return in, f, nil
}

type decompressed struct {
	io.Reader
	close func()
}

func (d *decompressed) Close() error { d.close(); return nil }

// LoadIndex reads an index file.
func LoadIndex(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIndex(f)
}

// ErrWindowNeedsFile is returned by ResolveWindow for standard input with
// an end that needs the trace's clock (it would be read twice).
var ErrWindowNeedsFile = errors.New("standard input is read once: give --from/--to as @T (the log's stamps)")

// ResolveWindow places spec on the trace at path: @T ends need nothing;
// relative and mark: ends need the trace's first record and markers (read
// with Clock, through the trace's index when it has one; warn receives
// what is wrong with the index). A spec that does not resolve is a
// *WindowError, a path of "-" that needs reading
// ErrWindowNeedsFile.
func ResolveWindow(ctx context.Context, path string, spec timerange.Spec, warn func(string)) (timerange.Window, error) {
	abs := func(has bool, p timerange.Point) bool { return !has || p.Base == timerange.Absolute }
	var clock timerange.Clock
	if !abs(spec.HasFrom, spec.From) || !abs(spec.HasTo, spec.To) {
		if path == "-" {
			return timerange.Window{}, ErrWindowNeedsFile
		}
		in, closer, err := OpenFile(path, true, warn)
		if err != nil {
			return timerange.Window{}, err
		}
		defer closer.Close()
		if clock, err = Clock(ctx, in, spec); err != nil {
			return timerange.Window{}, err
		}
	}
	win, err := spec.Resolve(clock)
	if err != nil {
		name := path
		if path == "-" {
			name = ""
		}
		return timerange.Window{}, &WindowError{Input: name, Err: err}
	}
	return win, nil
}

// WindowError is a window that does not resolve on the trace (an end
// before the start, a mark: of no marker...): a usage error. It names
// the trace once, as it is made: by Input, or in Err's message when that
// names it (a capture directory's clocks.json); wrappers add no name.
type WindowError struct {
	// Input is the trace the window does not resolve on, which Error
	// puts first; "" when Err names it, or for standard input.
	Input string
	Err   error
}

func (e *WindowError) Error() string {
	if e.Input != "" {
		return e.Input + ": " + e.Err.Error()
	}
	return e.Err.Error()
}
func (e *WindowError) Unwrap() error { return e.Err }

// Summary is the line 'iotap cut' prints about the cut of the input
// named name to the window spec.
func (r *Result) Summary(name string, spec timerange.Spec) string {
	how := "read from the start"
	if r.Indexed {
		how = "seeked with the index"
	}
	return fmt.Sprintf("%s %s: %d events kept of [%s), %d bytes read (%s)", r.Format, name, r.Events, spec, r.BytesRead, how)
}

// CutFile cuts the trace at path to w as 'iotap cut' does: the file is
// opened with OpenFile (seeking with its index when useIndex), meter, when
// set, wraps a plain file as it is read, and Cut writes the window of opt.
func CutFile(ctx context.Context, path string, w io.Writer, useIndex bool, meter func(io.ReaderAt, int64) io.ReaderAt, opt Options) (*Result, error) {
	in, closer, err := OpenFile(path, useIndex, opt.Warn)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	if meter != nil && in.ReaderAt != nil { // a plain file (compressed inputs are not metered)
		in.ReaderAt = meter(in.ReaderAt, in.Size)
	}
	res, err := Cut(ctx, in, w, opt)
	if errors.Is(err, detect.ErrNotTrace) {
		err = inputError(path, err) // named as the readers name it
	}
	return res, err
}

// LostInWindow says what loss the cut has inside the window (Lost): the
// lost events its records count, and the record the input ends inside,
// written without its time or left out (HalfKept); nil for none.
func (r *Result) LostInWindow() []string {
	var msgs []string
	if n := r.recorded(); n > 0 {
		msgs = append(msgs, fmt.Sprintf("the window records %d lost events", n))
	}
	switch {
	case r.HalfLost && r.HalfKept:
		msgs = append(msgs, "the input ends inside its last line, written in place without its time: 1 event lost")
	case r.HalfLost:
		msgs = append(msgs, fmt.Sprintf("the input ends inside a record (offset %d), not written: 1 event lost", r.TruncatedAt))
	}
	return msgs
}

// recorded is the loss the written records count (Lost without the half
// record).
func (r *Result) recorded() uint64 {
	if r.HalfLost {
		return r.Lost - 1
	}
	return r.Lost
}

// LossHint ends 'iotap cut's loss line (LostInWindow) for the cut
// written to out: "kept in OUT" when the cut holds what says the loss
// (the records counting lost events, a half line), and how to accept it.
func (r *Result) LossHint(out string) string {
	if r.recorded() > 0 || r.HalfKept {
		return "kept in " + out + "; use --allow-loss to accept"
	}
	return "use --allow-loss to accept"
}

// IndexFile reads the trace at path once (BuildIndex, a checkpoint every
// interval bytes; meter, when set, wraps the file as it is read) and
// returns its index, encoded (what 'iotap index' writes to
// path+IndexSuffix), and the line that describes it. When the trace ends
// inside a record (Index.TruncatedAt) the index and its line come with a
// *TruncatedError.
func IndexFile(ctx context.Context, path string, interval int64, meter func(io.ReaderAt, int64) io.ReaderAt) ([]byte, string, error) {
	in, closer, err := OpenFile(path, false, nil)
	if err != nil {
		return nil, "", err
	}
	defer closer.Close()
	if meter != nil && in.ReaderAt != nil {
		in.ReaderAt = meter(in.ReaderAt, in.Size)
	}
	ix, err := BuildIndex(ctx, in, interval)
	if err != nil {
		return nil, "", inputError(path, err)
	}
	b, err := ix.MarshalBinary()
	if err != nil {
		return nil, "", err
	}
	summary := fmt.Sprintf("%s: %s, %d records, %d checkpoints, %d markers, %d sources; wrote %s (%d bytes)",
		path, ix.Format, ix.Records, len(ix.Checkpoints), len(ix.Markers), len(ix.Sources), path+IndexSuffix, len(b))
	if at := ix.TruncatedAt(); at >= 0 {
		return b, summary, &TruncatedError{Path: path, Offset: at}
	}
	return b, summary, nil
}

// TruncatedError is IndexFile's and WriteIndexFile's loss: the trace at
// Path ends inside the record at Offset (a capture killed mid-write).
// The index is made all the same (WriteIndexFile writes it): it covers
// the records before it, and a cut of a window that holds the half record
// counts it as a lost event. It matches ErrTruncated (errors.Is).
type TruncatedError struct {
	Path   string
	Offset int64
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("%s ends inside a record (offset %d): the index covers the records before it", e.Path, e.Offset)
}

// Is matches ErrTruncated.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// WriteIndexFile is 'iotap index' on the trace at path: IndexFile, then
// the index written to path+IndexSuffix through create (called with the
// sidecar's path and the trace as the input it must not replace; it
// returns the writer and the commit that makes the file complete; nil
// creates a private file with internal/outfile, 0600, through a temporary
// file, never through a link). It returns the line that describes the
// index; a trace that ends inside a record is indexed and written all the
// same, with a *TruncatedError.
func WriteIndexFile(ctx context.Context, path string, interval int64, meter func(io.ReaderAt, int64) io.ReaderAt, create func(path string, inputs []string) (io.Writer, func() error, error)) (string, error) {
	b, summary, err := IndexFile(ctx, path, interval, meter)
	var trunc *TruncatedError
	if err != nil && !errors.As(err, &trunc) {
		return "", err
	}
	own := create == nil
	if own {
		create = outfile.Creator(nil)
	}
	w, commit, err := create(path+IndexSuffix, []string{path})
	if err != nil {
		return "", err
	}
	if _, err = w.Write(b); err == nil {
		err = commit()
	}
	if a, ok := w.(interface{ Abort() error }); ok && own && err != nil {
		a.Abort()
	}
	if err != nil {
		return "", err
	}
	if trunc != nil {
		return summary, trunc
	}
	return summary, nil
}
