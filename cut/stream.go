package cut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/timerange"
)

// Stream is the window of one trace file, read in-process as the
// input's own format (what Cut writes), without a temporary file: a
// reader that takes a stream (usb convert, mmio filter, mmio replay,
// export) reads it as it reads the whole file.
type Stream struct {
	pr   *io.PipeReader
	done chan struct{}
	res  *Result
	err  error
	in   io.Closer
	once sync.Once
	// pastEnd says, on Close, that the window starts after the input's
	// end (Result.PastEnd)
	pastEnd func()
}

// OpenStream starts cutting the trace at path to spec (Cut, seeking with
// the index INPUT.iotapidx when it has a valid one; a compressed file is
// read from its start) and returns the cut as a stream. It returns once
// the window is placed on the trace: a window that does not resolve (a
// missing marker...) is a *WindowError here, not a read error later.
// An unset spec streams the whole file. warn receives what is wrong with
// an index. Close the stream when done (before the end too: the cut
// stops).
func OpenStream(ctx context.Context, path string, spec timerange.Spec, warn func(string)) (*Stream, error) {
	in, closer, err := OpenFile(path, true, warn)
	if err != nil {
		return nil, inputError(path, err)
	}
	pr, pw := io.Pipe()
	s := &Stream{pr: pr, done: make(chan struct{}), in: closer}
	if warn != nil {
		s.pastEnd = func() {
			if msg := s.res.pastEnd(path, spec); msg != "" && s.err == nil {
				warn(msg)
			}
		}
	}
	first := &firstWrite{w: pw, c: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.res, s.err = Cut(ctx, in, first, Options{Window: spec, Warn: warn})
		pw.CloseWithError(s.err)
	}()
	select {
	case <-first.c: // the window resolved: records flow
	case <-s.done:
		if s.err != nil {
			closer.Close()
			return nil, inputError(path, s.err)
		}
	}
	return s, nil
}

// OpenTraceStream is OpenStream of a trace of kind want: a file of
// another kind, or one that cannot be read, is refused first with
// detect.OpenTrace's error, which says what the file is.
func OpenTraceStream(ctx context.Context, path string, want detect.Kind, spec timerange.Spec, warn func(string)) (*Stream, error) {
	t, err := detect.OpenTrace(path, want)
	if err != nil {
		return nil, err
	}
	t.Close()
	return OpenStream(ctx, path, spec, warn)
}

// firstWrite signals its first Write.
type firstWrite struct {
	w    io.Writer
	c    chan struct{}
	once sync.Once
}

func (f *firstWrite) Write(p []byte) (int, error) {
	f.once.Do(func() { close(f.c) })
	return f.w.Write(p)
}

func (s *Stream) Read(p []byte) (int, error) { return s.pr.Read(p) }

// Result is the cut's result (Events, Lost, Truncated, Indexed...). Call
// it once the stream was read to its end (or closed): it waits for the
// cut to finish.
func (s *Stream) Result() *Result {
	<-s.done
	return s.res
}

// Close stops the cut and releases the input.
func (s *Stream) Close() error {
	s.once.Do(func() {
		s.pr.CloseWithError(errStreamClosed)
		<-s.done
		s.in.Close()
		if s.pastEnd != nil {
			s.pastEnd()
		}
	})
	return nil
}

var errStreamClosed = errors.New("cut: stream closed")

// Loss says what the cut counted and a reader of the stream does not: a
// half record the input ends with (Result.Truncated), which the cut
// leaves out. Call it after the end, as Result.
func (s *Stream) Loss() []string {
	if s == nil {
		return nil
	}
	if r := s.Result(); r != nil && r.Truncated > 0 {
		return []string{fmt.Sprintf("the input ends inside a record (offset %d): the window leaves it out, 1 event lost", r.TruncatedAt)}
	}
	return nil
}
