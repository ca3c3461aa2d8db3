package userevents

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/iotap/iotap/rotate"
)

// RecordFileOptions configure RecordToFile: RecordLines written to a file
// or a ring of files.
type RecordFileOptions struct {
	Lines RecordLinesOptions
	// Path is the output file ("-" is standard output when Create allows
	// it). Create opens it (nil: mode 0600, exclusively); its Close
	// completes the file, and an Abort method, if it has one, removes it.
	Path   string
	Create func(path string) (io.WriteCloser, error)
	// Rotate, if set, splits the output into a ring of files, a new file
	// only between two events; with Lines.JSON each file starts with the
	// stream's "input" record (IsNDJSONInput), so it reads on its own.
	// Path and Create above are then not used (Rotate.Create opens each
	// file).
	Rotate *rotate.Options
	// Duration, if > 0, stops the recording after this long, as a ctx
	// done then does (Lines.Count stops it after a number of events).
	Duration time.Duration
}

// RecordFileResult is what RecordToFile recorded.
type RecordFileResult struct {
	RecordLinesResult
	// Files are the files of the ring kept, oldest first (with Rotate).
	Files []string
}

// RecordToFile is 'iotap events record' behind its flags: it creates the
// output, runs RecordLines into it and completes the output. When
// recording fails before any event was written (an event that is not
// registered, say), no file is left behind. Lost and undecodable events
// are counted in the result, not returned as an error.
func RecordToFile(ctx context.Context, opt RecordFileOptions) (res RecordFileResult, err error) {
	if opt.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Duration)
		defer cancel()
	}
	var w io.Writer
	var closeOut, abort func() error
	var lines *rotate.Lines
	if opt.Rotate != nil {
		files, err := rotate.NewFiles(*opt.Rotate)
		if err == nil {
			lines, err = rotate.NewRotatingLines(files, rotate.LineOptions{Header: IsNDJSONInput})
		}
		if err != nil {
			return res, err
		}
		w, closeOut = lines, lines.Close
		abort = func() error {
			err := lines.Close()
			for _, n := range lines.Files().Names() {
				os.Remove(n)
			}
			return err
		}
	} else {
		create := opt.Create
		if create == nil {
			create = func(p string) (io.WriteCloser, error) {
				return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			}
		}
		f, err := create(opt.Path)
		if err != nil {
			return res, err
		}
		w, closeOut = f, f.Close
		abort = func() error {
			if a, ok := f.(interface{ Abort() error }); ok {
				return a.Abort()
			}
			err := f.Close()
			if opt.Path != "-" {
				os.Remove(opt.Path)
			}
			return err
		}
	}
	res.RecordLinesResult, err = RecordLines(ctx, w, opt.Lines)
	if err != nil && res.Written == 0 {
		abort()
		return res, err
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if lines != nil {
		res.Files = lines.Files().Names()
	}
	return res, err
}
