package mapfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// A file read with read(2) that shrinks while it is read gives no
// signal: its reads just end early, at a clean end of file. Reader and
// ReaderAt compare that end with the size the file had when it was
// opened and, when the file is shorter now, return the *FaultError a
// mapped read of it would (the same message, the same handling by the
// callers), never a silent io.EOF.

// Reader reads a regular file from its current offset and turns an end
// of file before the size it had at NewReader into a *FaultError at the
// offset where the data ended.
type Reader struct {
	f    *os.File
	name string
	size int64 // the size at NewReader
	off  int64 // the file offset of the next byte Read returns
}

// NewReader returns a Reader of f from its current offset, named by
// name in its errors (f.Name() when empty); f itself, unwrapped, when it
// is not a regular file (a pipe, a terminal, a device: its size says
// nothing).
func NewReader(f *os.File, name string) io.Reader {
	size, ok := regularSize(f)
	if !ok {
		return f
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return f
	}
	if name == "" {
		name = f.Name()
	}
	return &Reader{f: f, name: name, size: size, off: off}
}

// Read reads from the file; io.EOF before the size at open, when the
// file is shorter now, is a *FaultError.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.off += int64(n)
	if err == io.EOF {
		err = shrunk(r.f, r.name, r.size, r.off)
	}
	return n, err
}

// ReaderAt reads a regular file at offsets, and turns an end of file
// before the size it had at NewReaderAt into a *FaultError.
type ReaderAt struct {
	f    *os.File
	name string
	size int64
}

// NewReaderAt returns a ReaderAt of f named by name in its errors
// (f.Name() when empty), and the size it checks against: f's size now.
func NewReaderAt(f *os.File, name string) (*ReaderAt, int64) {
	size, _ := regularSize(f)
	if name == "" {
		name = f.Name()
	}
	return &ReaderAt{f: f, name: name, size: size}, size
}

// ReadAt reads len(p) bytes at off; io.EOF before the size at open, when
// the file is shorter now, is a *FaultError.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.f.ReadAt(p, off)
	if err == io.EOF {
		err = shrunk(r.f, r.name, r.size, off+int64(n))
	}
	return n, err
}

// shrunk is the error of an end of file at end: a *FaultError when end
// is short of size and the file is shorter than size now (a file whose
// size says nothing of its content, as in /proc and /sys, keeps its size
// and ends cleanly), else io.EOF.
func shrunk(f *os.File, name string, size, end int64) error {
	if end >= size {
		return io.EOF
	}
	if now, ok := regularSize(f); ok && now < size {
		return &FaultError{File: name, Offset: end}
	}
	return io.EOF
}

// regularSize is f's size when f is a regular file.
func regularSize(f *os.File) (int64, bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.Size(), true
}

// Named returns err prefixed with file ("FILE: err"), or err as it is
// when it is a *FaultError of file, which names it already: an error
// says its file once.
func Named(file string, err error) error {
	var fe *FaultError
	if err == nil || errors.As(err, &fe) && fe.File == file {
		return err
	}
	return fmt.Errorf("%s: %w", file, err)
}

// OpenStat opens the input file path for reading and returns it with
// its FileInfo (the size the readers here compare against); on an error
// nothing stays open. The error of os.Open or Stat is returned as it is.
func OpenStat(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}
