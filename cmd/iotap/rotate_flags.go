package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/rotate"
)

// rotateFlags are the output habits every capture command shares (package
// rotate): a ring of files, as tshark -b, and counts every interval, as
// perf stat -I.
type rotateFlags struct{ rotate.Args }

// add registers the flags; what names what an interval counts.
func (f *rotateFlags) add(fl *pflag.FlagSet, ext, what string) {
	fl.IntVar(&f.Ring, "ring", 0, "with --file-size/--file-duration: keep only the newest `N` files (0: all), like tshark -b files:N")
	fl.StringVar(&f.FileSize, "file-size", "", "start a new output file every `SIZE` bytes (K, M suffix), like tshark -b filesize: -o x"+ext+" writes x_00001_TIME"+ext+", ...")
	fl.DurationVar(&f.FileDuration, "file-duration", 0, "start a new output file every `D` (e.g. 1m), like tshark -b duration")
	fl.DurationVar(&f.Interval, "interval", 0, "print the "+what+" written every `D` on stderr, like perf stat -I")
}

// onInterval prints the header line of --interval and returns the
// function that prints each interval, or nil without --interval.
func (f *rotateFlags) onInterval(e *env) func(rotate.Stats) {
	if f.Interval <= 0 {
		return nil
	}
	fmt.Fprintln(e.stderr, rotate.StatsHeader)
	return func(s rotate.Stats) { fmt.Fprintln(e.stderr, s) }
}

// commitCreate creates each output file of a capture (0600, O_NOFOLLOW,
// through a temporary file): its Close commits it, its Abort removes it.
func commitCreate(e *env) func(path string) (io.WriteCloser, error) {
	return e.outputs.Creator(outfile.Options{Mode: outfile.InPlace, Stdout: e.stdout})
}
