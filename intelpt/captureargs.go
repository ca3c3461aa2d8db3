package intelpt

import (
	"errors"
	"fmt"
	"time"

	"github.com/iotap/iotap/tracefs"
)

// CaptureArgs is 'iotap pt capture' behind its flags: where the capture
// goes and what it traces, the CPUs as a list, a process or a command.
// Options checks them into Record's options.
type CaptureArgs struct {
	Dir     string   // -o: the capture directory
	CPUs    string   // --cpu: the CPUs to trace, a list such as 0-3,6 ("": all online CPUs)
	Command []string // the command to start and trace (RecordOptions.Run)
	// Duration stops tracing after this long (RecordOptions.Duration;
	// 0: no limit; negative: an error of Options, as the other capture
	// commands' --duration).
	Duration time.Duration
	// Record holds the rest: Trace's buffers and packet options, Trace.PID
	// (--pid: one thread, per-thread mode), CopyBinaries, the command's
	// standard input and outputs.
	Record RecordOptions
}

// Options checks a and returns the options of Record(ctx, a.Dir, ...):
// a directory is needed; one of CPUs, Record.Trace.PID and Command at
// most; CPUs is parsed (tracefs.ParseCPUList); a PID is traced per
// thread; a Command is started and traced from its exec; Duration bounds
// the tracing (0: no limit; negative: an error). Errors name the flag.
func (a CaptureArgs) Options() (RecordOptions, error) {
	o := a.Record
	if a.Dir == "" {
		return o, errors.New("-o DIR is required")
	}
	modes := 0
	for _, given := range []bool{a.CPUs != "", o.Trace.PID != 0, len(a.Command) > 0} {
		if given {
			modes++
		}
	}
	if modes > 1 {
		return o, errors.New("give one of --cpu, --pid or -- COMMAND")
	}
	if a.Duration < 0 {
		return o, fmt.Errorf("--duration %v: want 0 (no limit) or more", a.Duration)
	}
	if a.CPUs != "" {
		cpus, err := tracefs.ParseCPUList(a.CPUs)
		if err != nil {
			return o, fmt.Errorf("--cpu: %v", err)
		}
		o.Trace.CPUs = cpus
	}
	if o.Trace.PID != 0 {
		o.Trace.Mode = PerThread
	}
	// A command is started held before its exec; tracing starts at the
	// exec (enable_on_exec) and ends when it exits.
	o.Command, o.Run = a.Command, len(a.Command) > 0
	o.Duration = a.Duration
	return o, nil
}
