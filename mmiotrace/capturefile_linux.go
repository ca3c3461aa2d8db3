//go:build linux

package mmiotrace

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/iotap/iotap/rotate"
)

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
