//go:build linux

package mmiotrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iotap/iotap/rotate"
)

// FileCaptureOptions configure CaptureToFile: a Capture written to a log
// file or a ring of log files, and optionally a bundle.
type FileCaptureOptions struct {
	Capture CaptureOptions
	// Path is the log file ("-" is standard output when Create allows
	// it). Create opens it (nil: CreateLog, mode 0600, compressed as its
	// name says); its Close completes the file.
	Path   string
	Create func(path string) (io.WriteCloser, error)
	// Rotate, if set, splits the log into a ring of files
	// (NewRotatingLog; its Create, nil: CreateLog, opens each file).
	// Path and Create above are then not used.
	Rotate *rotate.Options
	// Bundle, if set, is written once the log is complete: a tar.gz with
	// the log and what names its accesses (WriteBundleWarn). It needs the
	// log in one file (not standard output, not Rotate).
	Bundle string
	// Warn receives warnings about the bundle (nil: discarded).
	Warn func(string)
}

// FileCaptureResult is what CaptureToFile did.
type FileCaptureResult struct {
	CaptureResult
	// Files are the log files written: Path, or with Rotate the files of
	// the ring kept, oldest first.
	Files []string
}

// CaptureToFile is 'iotap mmio capture' behind its flags: it creates the
// output, runs Capture into it and completes the output, then writes the
// bundle. Progress goes to opt.Capture.Logf: "N lines (B bytes) to
// FILES" once the log is complete and "bundle PATH" once the bundle is.
// Lost events (res.Lost) and the command's failure (res.CommandErr) are in
// the result, not the error.
func CaptureToFile(ctx context.Context, opt FileCaptureOptions) (res FileCaptureResult, err error) {
	if opt.Bundle != "" && (opt.Rotate != nil || opt.Path == "-") {
		return res, errors.New("mmiotrace: a bundle needs the log in one file")
	}
	warn := func(s string) {
		if opt.Warn != nil {
			opt.Warn(s)
		}
	}
	if opt.Bundle != "" && !KernelRecordsPC() {
		warn("the kernel records no PCs (boot with mmiotrace.trace_pc=1): the bundle's kallsyms cannot name the code of the accesses")
	}
	var w io.Writer
	var closeOut func() error
	var lines *rotate.Lines
	if opt.Rotate != nil {
		if lines, err = NewRotatingLog(*opt.Rotate); err != nil {
			return res, err
		}
		w, closeOut = lines, lines.Close
	} else {
		create := opt.Create
		if create == nil {
			create = CreateLog
		}
		f, err := create(opt.Path)
		if err != nil {
			return res, err
		}
		w, closeOut = f, f.Close
	}
	res.CaptureResult, err = Capture(ctx, w, opt.Capture)
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	res.Files = []string{opt.Path}
	if lines != nil {
		res.Files = lines.Files().Names()
	}
	opt.Capture.logf("%d lines (%d bytes) to %s", res.Lines, res.Bytes, strings.Join(res.Files, " "))
	if opt.Bundle != "" {
		if err := WriteBundleWarn(opt.Bundle, opt.Path, opt.Capture.Sysfs, warn); err != nil {
			return res, err
		}
		opt.Capture.logf("bundle %s", opt.Bundle)
	}
	return res, nil
}

// LossText describes the events lost, or "" when none were: how many, by
// which count, and the buffer size they were lost with (SuggestBufferKB
// gives the size to retry with).
func (r CaptureResult) LossText() string {
	lost := r.Lost()
	if lost == 0 {
		return ""
	}
	return fmt.Sprintf("mmiotrace lost %d events (%d in \"Lost N events.\" marks, %d ring-buffer overruns) with %d KiB per CPU",
		lost, r.LostMarks, r.Overruns, r.BufferKB)
}
