package export

import (
	"context"
	"slices"

	capdir "github.com/iotap/iotap/capture"
)

// CaptureResult is what Capture captured and exported.
type CaptureResult struct {
	// Capture is the capture session's result (capture.Run).
	Capture *capdir.Result
	// Rows are the captures table's rows of the export, one per source
	// file (nil without an export).
	Rows []CaptureRow
	// Loss is what was lost, each said once: the capture's Loss, then
	// what the export found beyond it (Unrecorded).
	Loss []string
}

// Capture runs the capture session copt (capture.Run) and, when opt.Dir
// is set, exports the capture directory into it (Dir, the identity of
// this system): 'iotap capture [--parquet DIR]' in one call. An error of
// the capture returns no result; an error of the export comes with the
// result of the capture, whose directory is complete.
func Capture(ctx context.Context, copt capdir.Options, opt Options) (*CaptureResult, error) {
	res, err := capdir.Run(ctx, copt)
	if err != nil {
		return nil, err
	}
	return exportCaptured(ctx, res, opt)
}

// exportCaptured is Capture once the capture has run: res exported
// into opt.Dir when it is set, and the losses put together.
func exportCaptured(ctx context.Context, res *capdir.Result, opt Options) (*CaptureResult, error) {
	c := &CaptureResult{Capture: res, Loss: res.Loss}
	if opt.Dir == "" {
		return c, nil
	}
	rows, err := Dir(ctx, res.Dir, opt)
	if err != nil {
		return c, err
	}
	c.Rows, c.Loss = rows, append(slices.Clip(c.Loss), Unrecorded(rows, res.Lost)...)
	return c, nil
}
