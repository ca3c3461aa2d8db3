package detect

import (
	"io"
	"os"

	"github.com/iotap/iotap/usb"
)

// USBInput is a USB capture opened by OpenUSB: the usb.Pipeline reading
// it. Close it when done.
type USBInput struct {
	*usb.Pipeline
	in *Input // nil for standard input
}

// OpenUSB opens path as the input of 'iotap usb read', 'usb stats' and
// 'usb pair': usb.Prepare(opt) first, so that a selection that cannot be
// applied is an error matching usb.ErrSelection before any input is
// opened; then path ("-": standard input, read as it comes, never
// checked ahead) with OpenTrace, which refuses anything but a USB capture
// saying what it is. wrap, when not nil, wraps the file's reader (a
// progress meter of in.Size() bytes). Errors of the capture's head (not
// a capture, a text capture with a wall-clock window) come from
// usb.Prepared.Open.
func OpenUSB(path string, opt usb.ReadOptions, wrap func(in *Input) io.Reader) (*USBInput, error) {
	p, err := usb.Prepare(opt)
	if err != nil {
		return nil, err
	}
	if path == "-" {
		pl, err := p.Open(os.Stdin, path, -1, !IsRegular(os.Stdin))
		if err != nil {
			return nil, err
		}
		return &USBInput{Pipeline: pl}, nil
	}
	in, err := OpenTrace(path, USB)
	if err != nil {
		return nil, err
	}
	var src io.Reader = in
	if wrap != nil {
		src = wrap(in)
	}
	pl, err := p.Open(src, path, in.Size(), !in.Regular())
	if err != nil {
		in.Close()
		return nil, err
	}
	return &USBInput{Pipeline: pl, in: in}, nil
}

// Close stops the pipeline (usb.Pipeline.Close) and closes the file.
func (u *USBInput) Close() {
	u.Pipeline.Close()
	if u.in != nil {
		u.in.Close()
	}
}
