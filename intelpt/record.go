package intelpt

import (
	"context"
	"fmt"
	"io"
	"time"
)

// RecordOptions configure [Record]: a trace written to a capture directory.
type RecordOptions struct {
	Trace TraceConfig
	// Command is the traced command, recorded in capture.json. With Run,
	// Record starts it.
	Command []string
	// Run starts Command (with Stdin, Stdout and Stderr) held before its
	// exec, traces it per thread from the exec (Trace's Mode, PID and
	// EnableOnExec are set) and ends tracing when it exits. A command
	// that fails to start is an error; one that never ran (Record failed
	// before tracing) is killed.
	Run            bool
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// CopyBinaries copies the traced programs' files into DIR/binaries (by
	// build-id) so the directory decodes on another machine.
	CopyBinaries bool
	// Started, if set, is called once tracing is on: the place to release
	// a child that waits to exec the traced command (TraceConfig.EnableOnExec).
	Started func()
	// Done, if set, ends tracing when it delivers (the traced command
	// exited); ctx ending does too.
	Done <-chan error
	// Duration, if > 0, ends tracing after this long, as a ctx done then
	// would ('iotap pt capture --duration').
	Duration time.Duration
}

// context is ctx ended after o.Duration when that is > 0: the context
// Record traces under.
func (o *RecordOptions) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.Duration > 0 {
		return context.WithTimeout(ctx, o.Duration)
	}
	return ctx, func() {}
}

// RecordResult is what [Record] wrote.
type RecordResult struct {
	Info  *CaptureInfo // capture.json as written
	Files []MappedFile // the traced programs' files (mapped-files.json)
	// Lost names each buffer whose sideband reported lost trace (AUX
	// truncated, partial or collision flags, lost records).
	Lost []string
}

// WriteSummary tells what the capture wrote: the bytes of trace of each
// buffer file, then the traced programs' files that could not be copied
// or read (after prefix, "pt capture: ").
func (r *RecordResult) WriteSummary(w io.Writer, prefix string) {
	for _, b := range r.Info.Buffers {
		fmt.Fprintf(w, "%s: %d bytes of trace\n", BufferFileName(b.CPU), b.Bytes)
	}
	for _, mf := range r.Files {
		if mf.Error != "" {
			fmt.Fprintf(w, "%s%s: %s\n", prefix, mf.Path, mf.Error)
		}
	}
}
