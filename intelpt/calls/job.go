package calls

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/iotap/iotap/intelpt"
)

// Job is the whole 'iotap pt calls' job but for its output form: where
// the traced files are found, which threads and calls are kept, and for
// a raw trace the code it ran. A program fills it as the command's flags
// do, then Open gives the input and the options of Run.
type Job struct {
	// Sysroot and BuildIDDirs find the files the sideband maps
	// (Input.Finder).
	Sysroot     string
	BuildIDDirs []string
	// PID keeps only the threads of that process (0: all).
	PID int
	// NoDemangle keeps C++ and Rust names mangled.
	NoDemangle bool
	// MaxDepth bounds the call tree's depth (Options.TreeDepth); 0 or
	// less: no limit.
	MaxDepth int
	// Resolution keeps only calls at least that long (Options.Resolution,
	// compared with TSC ticks when the input has no TSC conversion); 0:
	// all calls; negative: a *JobArgError of Open.
	Resolution time.Duration
	// Kernel and Kallsyms give the kernel's code and names (LoadKernel),
	// when set.
	Kernel, Kallsyms string
	// Raw, when set, makes the input a raw PT trace of one thread over
	// this code: intelpt.Image.AddRaw's FILE[:OFFSET[-END]]:ADDRESS
	// (RawInput; no symbols).
	Raw []string
}

// RawError is Job.Open's error for a Raw specification that does not
// load.
type RawError struct{ Err error }

func (e *RawError) Error() string { return e.Err.Error() }
func (e *RawError) Unwrap() error { return e.Err }

// JobArgError is Job.Open's error for a field of the job whose value is
// out of range: Field names it ("Resolution"), Value is its value and
// Want what it may be.
type JobArgError struct {
	Field string
	Value any
	Want  string
}

func (e *JobArgError) Error() string {
	return fmt.Sprintf("calls: Job.%s %v: want %s", e.Field, e.Value, e.Want)
}

// check returns the *JobArgError of j's first field out of range.
func (j *Job) check() error {
	if j.Resolution < 0 {
		return &JobArgError{Field: "Resolution", Value: j.Resolution, Want: "0 (all calls) or more"}
	}
	return nil
}

// Open reads the input at path as j says (a raw trace over j.Raw,
// else Open) and returns it with the options of Run (Finder, demangling,
// PID, tree depth, resolution, kernel image and symbols). A raw trace
// in a regular file is mapped, not read (intelpt.MapFileRange), and Run
// drops its pages behind the decoder: Close the input when done. "-" is
// ErrStdin; a Raw that does not load a *RawError; an empty raw trace is
// an error (intelpt.ErrNoPSB), as FlowJob.Open's; other errors name path,
// once (an *fs.PathError of path, or of a file in a capture directory at
// path, names it already). j's fields are checked first: one out of
// range is a *JobArgError, before the input is read.
func (j *Job) Open(path string) (*Input, Options, error) {
	if err := j.check(); err != nil {
		return nil, Options{}, err
	}
	if path == "-" {
		return nil, Options{}, ErrStdin
	}
	in, o, err := j.open(path)
	if re := (*RawError)(nil); !errors.As(err, &re) {
		err = nameInput(err, path) // by what the error is (namesInput)
	}
	return in, o, err
}

func (j *Job) open(path string) (*Input, Options, error) {
	var o Options
	st, err := os.Stat(path)
	if err != nil {
		return nil, o, err
	}
	var in *Input
	if len(j.Raw) > 0 {
		o.Image = intelpt.NewImage()
		for _, r := range j.Raw {
			if _, err := o.Image.AddRaw(r); err != nil {
				return nil, o, &RawError{err}
			}
		}
		if !st.Mode().IsRegular() || st.Size() > 0 {
			// Mapped, its pages dropped behind the decoder (Input.Close);
			// a pipe is copied to a temporary file, which is mapped.
			m, err := intelpt.MapFileRange(path, 0, 0)
			if err != nil {
				return nil, o, named(err, path) // "intelpt: open path: ..."
			}
			if len(m.Data) == 0 { // a pipe that gave no bytes
				m.Close()
				return nil, o, errEmptyTrace
			}
			in = RawInput(m.Data, intelpt.Config{})
			in.mapped = m
		} else {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, o, err
			}
			if len(b) == 0 {
				return nil, o, errEmptyTrace
			}
			in = RawInput(b, intelpt.Config{})
		}
	} else {
		var err error
		if in, err = Open(path); err != nil {
			if !st.IsDir() && !st.Mode().IsRegular() {
				// "intelpt: path is not a regular file" (ReadPerfDataFile)
				err = named(err, path)
			}
			return nil, o, err
		}
		if err := noPTData(in, path); err != nil {
			return nil, o, err
		}
	}
	o.Finder, o.Demangle, o.PID, o.TreeDepth = in.Finder(j.Sysroot, j.BuildIDDirs), !j.NoDemangle, int32(j.PID), j.MaxDepth
	if j.MaxDepth <= 0 {
		o.TreeDepth = -1
	}
	if j.Kernel != "" || j.Kallsyms != "" {
		var err error
		if o.Kernel, o.KernelSymbols, err = LoadKernel(j.Kernel, j.Kallsyms); err != nil {
			return nil, o, err
		}
	}
	o.Resolution = uint64(j.Resolution.Nanoseconds())
	return in, o, nil
}

// JobWarning is a note of Job.Warnings: Problem, a field of the job
// (Field, "Resolution") and what follows for it (Effect). String says it
// in the library's terms; a program with other names for the fields (a
// command's flags) words it with its own name for Field.
type JobWarning struct {
	Field, Problem, Effect string
}

// String is "PROBLEM: Job.FIELD EFFECT".
func (w JobWarning) String() string {
	return w.Problem + ": Job." + w.Field + " " + w.Effect
}

// Warnings say what of j does not apply to in as asked, before Run: a
// Resolution over an input without TSC conversion (ToNS nil) is compared
// with TSC ticks, not nanoseconds.
func (j *Job) Warnings(in *Input) []JobWarning {
	if j.Resolution != 0 && in.ToNS == nil {
		return []JobWarning{{Field: "Resolution", Problem: "no TSC conversion in the input", Effect: "is compared with TSC ticks"}}
	}
	return nil
}

// Loss says what the analysis of in lacks, "" when nothing: the trace or
// sideband in lost (which says it all: gaps and a cut stream follow from
// it), else the gaps in the trace (overflows, decoding errors, code not
// found) and the streams that end inside a packet (Cut), joined by "; ".
func (r *Result) Loss(in *Input) string {
	if in.Loss != "" {
		return "data lost: " + in.Loss
	}
	var l []string
	if r.Gaps > 0 {
		l = append(l, fmt.Sprintf("%d gaps in the trace", r.Gaps))
	}
	return strings.Join(append(l, r.Cut...), "; ")
}
