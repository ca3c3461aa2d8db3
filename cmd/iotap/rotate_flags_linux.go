//go:build linux

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/rotate"
)

// rotateFlags are the output habits every capture command shares (package
// rotate): a ring of files, as tshark -b, and counts every interval, as
// perf stat -I.
type rotateFlags struct {
	ring     int           // --ring: files kept
	fileSize string        // --file-size
	fileDur  time.Duration // --file-duration
	interval time.Duration // --interval
}

// add registers the flags; what names what an interval counts.
func (f *rotateFlags) add(fl *pflag.FlagSet, ext, what string) {
	fl.IntVar(&f.ring, "ring", 0, "with --file-size/--file-duration: keep only the newest `N` files (0: all), like tshark -b files:N")
	fl.StringVar(&f.fileSize, "file-size", "", "start a new output file every `SIZE` bytes (K, M suffix), like tshark -b filesize: -o x"+ext+" writes x_00001_TIME"+ext+", ...")
	fl.DurationVar(&f.fileDur, "file-duration", 0, "start a new output file every `D` (e.g. 1m), like tshark -b duration")
	fl.DurationVar(&f.interval, "interval", 0, "print the "+what+" written every `D` on stderr, like perf stat -I")
}

// options returns the ring of files for -o out, or ok false when no
// rotation was asked for.
func (f *rotateFlags) options(out string) (opt rotate.Options, ok bool, err error) {
	if f.fileSize == "" && f.fileDur <= 0 {
		if f.ring != 0 {
			return opt, false, usageErrorf("--ring %d needs --file-size or --file-duration", f.ring)
		}
		return opt, false, nil
	}
	opt = rotate.Options{Path: out, Files: f.ring, Duration: f.fileDur}
	if f.fileSize != "" {
		n, err := rotate.ParseSize(f.fileSize)
		if err != nil {
			return opt, false, usageErrorf("--file-size: %v", err)
		}
		opt.Size = int64(n)
	}
	if opt.Check() != nil {
		return opt, false, usageErrorf("--file-size/--file-duration write files: give -o FILE (and --ring N >= 0)")
	}
	return opt, true, nil
}

// onInterval prints the header line of --interval and returns the
// function that prints each interval, or nil without --interval.
func (f *rotateFlags) onInterval(e *env) func(rotate.Stats) {
	if f.interval <= 0 {
		return nil
	}
	fmt.Fprintln(e.stderr, rotate.StatsHeader)
	return func(s rotate.Stats) { fmt.Fprintln(e.stderr, s) }
}

// commitCreate creates each output file of a capture (0600, O_NOFOLLOW,
// through a temporary file): its Close commits it, its Abort removes it.
func commitCreate(e *env) func(path string) (io.WriteCloser, error) {
	return func(path string) (io.WriteCloser, error) {
		f, err := e.createOutput(path, outfile.InPlace)
		if err != nil {
			return nil, err
		}
		return commitCloser{f}, nil
	}
}

// commitCloser closes an output file by committing it; Abort removes it.
type commitCloser struct{ f *outfile.File }

func (c commitCloser) Write(p []byte) (int, error) { return c.f.Write(p) }
func (c commitCloser) Close() error                { return c.f.Commit() }
func (c commitCloser) Abort() error                { return c.f.Abort() }
