package calls

import (
	"errors"
	"fmt"
	"os"
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
	// compared with TSC ticks when the input has no TSC conversion).
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

// Open reads the input at path as j says (a raw trace over j.Raw,
// else Open) and returns it with the options of Run (Finder, demangling,
// PID, tree depth, resolution, kernel image and symbols). A raw trace
// in a regular file is mapped, not read (intelpt.MapFileRange), and Run
// drops its pages behind the decoder: Close the input when done. "-" is
// ErrStdin; a Raw that does not load a *RawError; an empty raw trace is
// an error (intelpt.ErrNoPSB), as FlowJob.Open's; other errors name path,
// once (an *fs.PathError of path, or of a file in a capture directory at
// path, names it already).
func (j *Job) Open(path string) (*Input, Options, error) {
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

// Warnings say, in the words of pt calls' flags, what of j does not
// apply to in as asked, before Run: a Resolution over an input without
// TSC conversion (ToNS nil) is compared with TSC ticks, not nanoseconds.
func (j *Job) Warnings(in *Input) []string {
	if j.Resolution != 0 && in.ToNS == nil {
		return []string{"no TSC conversion in the input: --resolution is compared with TSC ticks"}
	}
	return nil
}

// Loss says what the analysis of in lacks, "" when nothing: the trace or
// sideband in lost, else the gaps in the trace (overflows, decoding
// errors, code not found).
func (r *Result) Loss(in *Input) string {
	switch {
	case in.Loss != "":
		return "data lost: " + in.Loss
	case r.Gaps > 0:
		return fmt.Sprintf("%d gaps in the trace", r.Gaps)
	}
	return ""
}
