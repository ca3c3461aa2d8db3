package main

import (
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/detect"
)

// traceInput is an opened input trace whose content was checked.
type traceInput struct {
	io.Reader          // from the first byte (the checked head is replayed)
	File      *os.File // os.Stdin for "-"
	Kind      detect.Result
}

func (t *traceInput) Close() error {
	if t.File == os.Stdin {
		return nil
	}
	return t.File.Close()
}

// openTrace opens path ("-": standard input) and checks that it holds a
// trace of kind want (package detect): anything else is an error that
// says what the file is, and an unreadable file an error with a remedy.
// Pipes are not checked here (see below).
func openTrace(path string, want detect.Kind) (*traceInput, error) {
	return openTraceOpt(path, want, want != detect.MMIO)
}

// openTraceOpt is openTrace; with trustPipes false a pipe is checked too
// (its first detect.HeadSize bytes are read before anything is decoded).
func openTraceOpt(path string, want detect.Kind, trustPipes bool) (*traceInput, error) {
	f := os.Stdin
	if path != "-" {
		var err error
		if f, err = detect.Open(path); err != nil {
			return nil, err
		}
	}
	if trustPipes && !isRegular(f) {
		// A pipe (a live capture piped in) is not held up until a head
		// is read: its reader checks it as it goes.
		return &traceInput{Reader: f, File: f}, nil
	}
	head, complete, rest, err := detect.ReadHead(f)
	var res detect.Result
	if err == nil {
		res, err = detect.Expect(head, complete, want)
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	} else {
		err = detect.ReadError(path, err)
	}
	if err != nil {
		if f != os.Stdin {
			f.Close()
		}
		return nil, err
	}
	return &traceInput{Reader: rest, File: f, Kind: res}, nil
}
