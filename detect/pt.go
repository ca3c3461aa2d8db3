package detect

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/mapfile"
)

// PTInput is an Intel PT input opened by OpenPT: either a raw PT stream,
// to be decoded as it is read (Stream), or the whole input read and split
// into its streams (Loaded).
type PTInput struct {
	Path string
	// Stream reads a raw PT file or standard input from its first byte;
	// nil when the input was loaded.
	Stream *bufio.Reader
	// File is the file Stream reads (os.Stdin for "-"), nil when loaded.
	File *os.File
	// Loaded is the input split into its streams: a perf.data file,
	// whose streams are read from it as they are decoded
	// (intelpt.OpenPerfDataFile: InputStream.Reader, in constant
	// memory; a perf.data on standard input or a pipe from a temporary
	// copy, intelpt.SpoolPerfData); or read whole (intelpt.ParseInput): a byte range
	// FILE:FROM[-TO] (intelpt.ReadFile), standard input when not
	// streamed, a file whose head is not raw PT.
	Loaded *intelpt.Input

	perf *intelpt.PerfDataFile // the perf.data file Loaded reads
}

// Close closes the file being streamed or read (never standard input).
func (in *PTInput) Close() error {
	if in.perf != nil {
		return in.perf.Close()
	}
	if in.File == nil || in.File == os.Stdin {
		return nil
	}
	return in.File.Close()
}

// Size is the size of the streamed file when it is a regular file, -1
// otherwise (standard input, a pipe, or a loaded input).
func (in *PTInput) Size() int64 {
	if in.File == nil || in.File == os.Stdin {
		return -1
	}
	if fi, err := in.File.Stat(); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return -1
}

// OpenPT opens path as an Intel PT input ('iotap pt dump' and 'pt stats'):
// "-" is standard input, FILE:FROM[-TO] a byte range of FILE (ptdump's
// syntax; out of the file: *intelpt.RangeError). With stream, a raw PT
// file or standard input is returned unread (PTInput.Stream: decode it in
// constant memory); anything else — a perf.data, a byte range, a file
// whose head is not raw PT, stdin without stream — is read whole and
// split into its streams (PTInput.Loaded). Errors say what the input is
// when it is not PT (a pipe of another kind is refused without reading it
// further), name a directory, and give a remedy for files that cannot be
// read (ReadError). A perf.data on standard input or a named pipe is
// copied to a temporary file and read from it as a file is; a named
// pipe is opened once (a second open would wait for
// a writer that is gone).
func OpenPT(path string, stream bool) (*PTInput, error) {
	if fi, err := os.Stat(path); path != "-" && err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		// A named pipe (or a device): it is opened once, and its head
		// read for detection is the head of what is decoded.
		return openPTPipe(path, stream)
	}
	if stream {
		if in, err := openPTStream(path); in != nil || err != nil {
			return in, err
		}
	}
	if in, err := openPerfData(path); in != nil || err != nil {
		return in, err
	}
	var b []byte
	var err error
	if path == "-" {
		br := bufio.NewReaderSize(os.Stdin, 1<<20)
		if magic, _ := br.Peek(len(intelpt.PerfMagic)); intelpt.IsPerfData(magic) {
			return spoolPerfData(path, br)
		}
		b, err = io.ReadAll(br)
	} else {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return nil, fmt.Errorf("pt: %s is a directory (give a trace file)", path)
		}
		b, err = intelpt.ReadFile(path)
		if re := (*intelpt.RangeError)(nil); errors.As(err, &re) {
			return nil, fmt.Errorf("pt: %w", err)
		}
	}
	if err != nil {
		return nil, ReadError(path, err)
	}
	return loadPT(path, b)
}

// openPerfData opens path for its streams when it is a perf.data file
// (nil, with no error, when it is not one), reading none of them.
func openPerfData(path string) (*PTInput, error) {
	if path == "-" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil // FILE:RANGE, or said by the reading
	}
	head := make([]byte, len(intelpt.PerfMagic))
	_, err = io.ReadFull(f, head)
	st, serr := f.Stat()
	f.Close()
	if err != nil || serr != nil || !st.Mode().IsRegular() || !intelpt.IsPerfData(head) {
		return nil, nil
	}
	pf, err := intelpt.OpenPerfDataFile(path)
	if errors.Is(err, intelpt.ErrPerfData) {
		return nil, fmt.Errorf("%s: %w", path, err)
	} else if err != nil {
		return nil, ReadError(path, err)
	}
	return perfDataInput(path, pf)
}

// perfDataInput is the input of the perf.data pf opened for path.
func perfDataInput(path string, pf *intelpt.PerfDataFile) (*PTInput, error) {
	tr, err := intelpt.PerfInput(pf.PerfTrace)
	in := &PTInput{Path: path, Loaded: tr, perf: pf}
	if err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}

// openPTPipe opens path, a named pipe or another file that cannot be
// read twice, once: its head says what it is; raw PT is streamed (with
// stream), a perf.data copied to a temporary file (its streams are found
// by offsets; spoolPerfData), as standard input is, anything else read
// whole from the same reader.
func openPTPipe(path string, stream bool) (*PTInput, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	in := &PTInput{Path: path, File: f, Stream: bufio.NewReaderSize(f, 1<<20)}
	head, _ := in.Stream.Peek(HeadSize)
	res, err := Head(head, len(head) < HeadSize)
	if err == nil && res.Kind != PT {
		err = &NotTraceError{Want: PT, Found: &res}
	}
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("pt: %s: %w", path, err)
	}
	if magic, _ := in.Stream.Peek(len(intelpt.PerfMagic)); stream && !intelpt.IsPerfData(magic) {
		return in, nil
	}
	defer in.Close()
	if magic, _ := in.Stream.Peek(len(intelpt.PerfMagic)); intelpt.IsPerfData(magic) {
		return spoolPerfData(path, in.Stream)
	}
	b, err := io.ReadAll(in.Stream)
	if err != nil {
		return nil, ReadError(path, err)
	}
	return loadPT(path, b)
}

// spoolPerfData opens the perf.data on r (standard input, a pipe) from a
// temporary copy (intelpt.SpoolPerfData), as openPerfData opens a file:
// its streams are read from the copy as they come, not held in memory.
func spoolPerfData(path string, r io.Reader) (*PTInput, error) {
	pf, err := intelpt.SpoolPerfData(r)
	if errors.Is(err, intelpt.ErrPerfData) {
		return nil, fmt.Errorf("%s: %w", path, err)
	} else if err != nil {
		return nil, ReadError(path, err)
	}
	return perfDataInput(path, pf)
}

// loadPT splits b, the whole input path, into its streams.
func loadPT(path string, b []byte) (*PTInput, error) {
	tr, err := intelpt.ParseInput(b)
	switch {
	case errors.Is(err, intelpt.ErrNoPSB):
		// Not PT at all: say what it is, or why not.
		if _, derr := Expect(b[:min(len(b), HeadSize)], len(b) <= HeadSize, PT); derr != nil {
			err = derr
		}
		return nil, fmt.Errorf("pt: %s: %w", path, err)
	case err != nil:
		return &PTInput{Path: path, Loaded: tr}, fmt.Errorf("%s: %w", path, err)
	}
	return &PTInput{Path: path, Loaded: tr}, nil
}

// openPTStream opens path (or stdin) for streaming when it holds raw PT:
// nil, with no error, for perf.data files and paths that do not open
// (FILE:RANGE), which OpenPT reads whole.
func openPTStream(path string) (*PTInput, error) {
	f := os.Stdin
	if path != "-" { // a regular file: a pipe is openPTPipe's
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, nil
		}
	}
	// A regular file cut shorter while it is read ends in an error
	// (mapfile.Reader).
	in := &PTInput{Path: path, File: f, Stream: bufio.NewReaderSize(mapfile.NewReader(f, inputName(path)), 1<<20)}
	if head, _ := in.Stream.Peek(HeadSize); path != "-" {
		if res, err := Head(head, len(head) < HeadSize); err != nil || res.Kind != PT {
			in.Close()
			if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
				return nil, fmt.Errorf("pt: %s is a directory (give a trace file)", path)
			}
			// Not raw PT by its head: read whole, to say what it is.
			return nil, nil
		}
	}
	if magic, _ := in.Stream.Peek(len(intelpt.PerfMagic)); intelpt.IsPerfData(magic) {
		in.Close()
		if path == "-" {
			// Its streams are found by offsets: copied to a temporary
			// file, from what the peek already holds.
			return spoolPerfData(path, in.Stream)
		}
		return nil, nil
	}
	return in, nil
}

// Perf is what a loaded perf.data recorded besides its streams (its
// decoder configuration and loss), nil for raw PT.
func (in *PTInput) Perf() *intelpt.PerfTrace {
	if in.Loaded == nil {
		return nil
	}
	return in.Loaded.Perf
}

// Config is the decoder configuration the input recorded: a perf.data's
// (its AUXTRACE_INFO), else the capture.json of an 'iotap pt capture'
// directory when Path is one of its buffers (intelpt.ConfigOf), else the
// zero Config.
func (in *PTInput) Config() intelpt.Config {
	if p := in.Perf(); p != nil {
		return p.Config
	}
	cfg, _ := intelpt.ConfigOf(in.Path)
	return cfg
}
