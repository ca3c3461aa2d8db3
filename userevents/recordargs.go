package userevents

import (
	"errors"
	"fmt"
	"time"

	"github.com/iotap/iotap/rotate"
)

// RecordArgs are 'iotap events record' as its command line gives them:
// FileOptions checks them into the options of RecordToFile.
type RecordArgs struct {
	// Lines are taken as they are (--json, --buffer-kb, --count, --perf
	// and the callbacks); FileOptions sets their Events and Interval.
	Lines    RecordLinesOptions
	Path     string        // -o: the output file, "-" for standard output (required)
	Targets  []string      // the arguments: NAME or 'NAME FIELDS' (ParseTargets)
	Duration time.Duration // --duration: stop after this long (0: no limit)
	Rotate   rotate.Args   // --ring, --file-size, --file-duration, --interval
}

// FileOptions checks a and returns the options of RecordToFile. Its
// errors are *ArgError: Arg "output" (no Path), "duration" (negative),
// "event" (a target that does not parse, named) or "rotate"
// (rotate.Args.Options, naming the flag).
func (a RecordArgs) FileOptions() (RecordFileOptions, error) {
	o := RecordFileOptions{Lines: a.Lines, Path: a.Path, Duration: a.Duration}
	if a.Path == "" {
		return o, &ArgError{"output", errors.New("-o FILE is required (- for stdout)")}
	}
	if a.Duration < 0 {
		return o, &ArgError{"duration", fmt.Errorf("--duration %v: want 0 (no limit) or more", a.Duration)}
	}
	var err error
	if o.Lines.Events, err = ParseTargets(a.Targets); err != nil {
		return o, &ArgError{"event", err}
	}
	if o.Rotate, err = a.Rotate.Options(a.Path); err != nil {
		return o, &ArgError{"rotate", err}
	}
	o.Lines.Interval = a.Rotate.Interval
	return o, nil
}
