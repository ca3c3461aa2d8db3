package detect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// File recognises the trace in the file at path. A file that cannot be
// read is an error that is not ErrNotTrace (see ReadError): "permission
// denied" is never "not a trace".
func File(path string) (Result, error) {
	f, err := Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	head, complete, _, err := ReadHead(f)
	if err != nil {
		return Result{}, ReadError(path, err)
	}
	res, err := Head(head, complete)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// Open opens an input file for reading, refusing a directory and
// explaining the errors (ReadError). A named pipe is opened (and read
// once): use "-" and standard input for a stream.
func Open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, ReadError(path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory (give a trace file%s)", path, dirHint)
	}
	return f, nil
}

// dirHint is set by commands that do take directories; empty here.
const dirHint = ""

// ReadError adds the path and a remedy to an error opening or reading an
// input.
func ReadError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot read %s: permission denied (run iotap as the file's owner or as root, e.g. with sudo, or make the file readable with chmod): %w", path, fs.ErrPermission)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot read %s: no such file: %w", path, fs.ErrNotExist)
	case isLoop(err):
		return fmt.Errorf("cannot read %s: too many levels of symbolic links (a link that points to itself?)", path)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	return fmt.Errorf("cannot read %s: %w", path, err)
}
