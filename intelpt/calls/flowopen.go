package calls

import (
	"errors"
	"fmt"
	"os"

	"github.com/iotap/iotap/intelpt"
)

// ErrNoSideband is OpenFlow's error for a file that is neither a
// perf.data nor a capture directory: without a sideband, the image must
// be given (intelpt.Image.AddRaw, AddELF).
var ErrNoSideband = errors.New("calls: not a perf.data file nor a capture directory: no sideband names the traced files")

// StreamsError is OpenFlow's error when the input holds several PT
// streams and none was chosen.
type StreamsError struct {
	Path    string
	Streams int
}

func (e *StreamsError) Error() string {
	return fmt.Sprintf("calls: %s has %d PT streams: choose one", e.Path, e.Streams)
}

// FlowOptions choose the stream of OpenFlow and where its code is found.
type FlowOptions struct {
	// Stream is the index of the PT stream (as Input.Streams numbers
	// them); -1: the only one.
	Stream int
	// PID is the process whose mappings make the image (0: the one the
	// stream shows, FlowImage).
	PID int32
	// Sysroot and BuildIDDirs find the mapped files (Input.Finder).
	Sysroot     string
	BuildIDDirs []string
	// Kernel and Kallsyms give the kernel's code (LoadKernel), when set.
	Kernel, Kallsyms string
}

// FlowInput is one PT stream of a perf.data or capture directory with
// the memory image of its process, for an instruction listing
// (intelpt.FlowListing; 'iotap pt flow perf.data').
type FlowInput struct {
	Stream intelpt.PerfStream
	Config intelpt.Config
	Image  *intelpt.Image
	// Format is intelpt.FormatPerfData or FormatCaptureDir.
	Format string
	// Unfound are the mappings whose files were not found (their code is
	// missing from the image).
	Unfound []intelpt.Unfound
	// Loss describes what the input lost, as Input.Loss ("" when none):
	// a cut file, AUX records flagged truncated, lost records.
	Loss string

	in *Input
}

// Close closes the file the stream is read from (Stream.Map, Reader).
func (f *FlowInput) Close() error { return f.in.Close() }

// OpenFlow opens path, a perf.data file or an 'iotap pt capture'
// directory (Open), and builds the image of one of its streams from the
// files its sideband maps (FlowImage). The stream is read from its file
// (Stream.Map): Close the input when done. A path that is neither a
// regular file nor a directory (a named pipe) is refused, not opened.
// The errors of reading the input name path, once (as Job.Open's).
func OpenFlow(path string, o FlowOptions) (*FlowInput, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			// A named pipe cannot be opened twice (its head, then the
			// file): the second open waits for a writer for ever.
			return nil, fmt.Errorf("calls: %s is not a regular file (a perf.data is read by offsets)", path)
		}
		head := make([]byte, 8)
		if fh, err := os.Open(path); err == nil {
			fh.Read(head)
			fh.Close()
		}
		if !intelpt.IsPerfData(head) {
			return nil, ErrNoSideband
		}
	}
	in, err := Open(path)
	if err != nil {
		return nil, nameInput(err, path)
	}
	if err := noPTData(in, path); err != nil {
		return nil, err
	}
	i := o.Stream
	if i < 0 {
		if len(in.Streams) != 1 {
			in.Close()
			return nil, &StreamsError{Path: path, Streams: len(in.Streams)}
		}
		i = 0
	}
	co := Options{Finder: in.Finder(o.Sysroot, o.BuildIDDirs)}
	if o.Kernel != "" || o.Kallsyms != "" {
		if co.Kernel, _, err = LoadKernel(o.Kernel, o.Kallsyms); err != nil {
			in.Close()
			return nil, err
		}
	}
	im, unfound, err := FlowImage(in, i, o.PID, co)
	if err != nil {
		in.Close()
		return nil, err
	}
	return &FlowInput{Stream: in.Streams[i], Config: in.Config, Image: im, Format: in.Format, Unfound: unfound, Loss: in.Loss, in: in}, nil
}

// noPTData is the error for in, the perf.data at path, when it holds no
// PT stream (closing in), as pt dump and pt stats say it: there are no
// calls nor instructions to list.
func noPTData(in *Input, path string) error {
	if len(in.Streams) > 0 || in.Format != intelpt.FormatPerfData {
		return nil
	}
	in.Close()
	return named(fmt.Errorf("%s: %w (no PERF_RECORD_AUXTRACE: was it recorded with -e intel_pt//?)", path, intelpt.ErrNoPTData), path)
}
