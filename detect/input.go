package detect

import (
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/internal/mapfile"
)

// Input is a trace opened by OpenTrace: its content was checked to be of
// the kind asked for.
type Input struct {
	// Reader reads the input from its first byte (the head read for
	// detection is replayed). A caller may wrap it, e.g. to count the
	// bytes read for a progress meter.
	io.Reader
	// File is the opened file, os.Stdin for "-".
	File *os.File
	// Result is what the input was recognised as; the zero Result for a
	// pipe that was not checked ahead (see OpenTrace).
	Result Result
}

// Close closes the file (never standard input).
func (in *Input) Close() error {
	if in.File == os.Stdin {
		return nil
	}
	return in.File.Close()
}

// Format names the input's format as detected: "mmiotrace log
// (zstd-compressed)"; "" when it was not checked.
func (in *Input) Format() string { return in.Result.String() }

// Regular reports whether the input is a regular file (not a pipe, a FIFO
// or a terminal: a capture piped in).
func (in *Input) Regular() bool { return IsRegular(in.File) }

// Size is the size of a regular file in bytes, -1 for any other input.
func (in *Input) Size() int64 {
	if fi, err := in.File.Stat(); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return -1
}

// IsRegular reports whether f is a regular file.
func IsRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// OpenTrace opens path ("-": standard input) and checks that it holds a
// trace of kind want: anything else is an error saying what the input is
// (ErrNotTrace), and an input that cannot be read an error with a remedy
// (ReadError).
//
// A pipe of USB, user_events or PT data is not checked ahead (Result is
// zero): a live capture piped in is not held up until HeadSize bytes have
// arrived, and the readers of those formats check it as they go. A pipe
// of an mmiotrace log is checked like a file: its first HeadSize bytes are
// read before anything is decoded.
func OpenTrace(path string, want Kind) (*Input, error) {
	f := os.Stdin
	if path != "-" {
		var err error
		if f, err = Open(path); err != nil {
			return nil, err
		}
	}
	if want != MMIO && !IsRegular(f) {
		return &Input{Reader: f, File: f}, nil
	}
	// A regular file cut shorter while it is read ends in an error, not
	// a clean end of file (mapfile.Reader).
	head, complete, rest, err := ReadHead(mapfile.NewReader(f, inputName(path)))
	var res Result
	if err == nil {
		res, err = Expect(head, complete, want)
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	} else {
		err = ReadError(path, err)
	}
	if err != nil {
		if f != os.Stdin {
			f.Close()
		}
		return nil, err
	}
	return &Input{Reader: rest, File: f, Result: res}, nil
}

// inputName names path in errors: "standard input" for "-".
func inputName(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}
