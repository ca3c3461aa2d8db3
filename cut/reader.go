package cut

import (
	"context"
	"io"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/timerange"
)

// Reader is a trace input of one kind read in its own format: the whole
// input, or the cut of a time window (OpenReader).
type Reader struct {
	io.Reader
	// Stream is the window's cut, read in-process; nil when the whole
	// input is read.
	Stream *Stream
	// Input is the whole input, checked to be of the kind asked for (a
	// pipe is not checked ahead: detect.OpenTrace); nil for a window.
	Input *detect.Input
}

// OpenReader opens the trace at path ("-": standard input) of kind want
// as 'iotap usb convert' reads its input: with spec set, the window's cut
// (OpenTraceStream: the input's kind is checked first, a window that does
// not resolve is a *WindowError); else the whole input (detect.OpenTrace).
// Either way an input of another kind is refused with the same error,
// which says what the input is. warn receives what is wrong with an
// index. Close it when done.
func OpenReader(ctx context.Context, path string, want detect.Kind, spec timerange.Spec, warn func(string)) (*Reader, error) {
	if spec.Set() {
		s, err := OpenTraceStream(ctx, path, want, spec, warn)
		if err != nil {
			return nil, err
		}
		return &Reader{Reader: s, Stream: s}, nil
	}
	in, err := detect.OpenTrace(path, want)
	if err != nil {
		return nil, err
	}
	return &Reader{Reader: in, Input: in}, nil
}

// Size is the size of the input read whole when it is a regular file,
// -1 for a window or any other input.
func (r *Reader) Size() int64 {
	if r.Input == nil {
		return -1
	}
	return r.Input.Size()
}

// Loss says what a reader of a window's cut does not see (Stream.Loss);
// nil for a whole input. Call it after the end.
func (r *Reader) Loss() []string { return r.Stream.Loss() }

// Close stops the cut or closes the input (never standard input).
func (r *Reader) Close() error {
	if r.Stream != nil {
		return r.Stream.Close()
	}
	return r.Input.Close()
}
