package intelpt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrNoPSB says that an input is not a raw PT trace: it holds no PSB
// packet, where decoding starts.
var ErrNoPSB = errors.New("not an Intel PT trace")

// ErrNoPTData says that a perf.data holds no PT data (no
// PERF_RECORD_AUXTRACE record).
var ErrNoPTData = errors.New("perf.data holds no PT data")

// psbPattern is a whole PSB packet.
var psbPattern = bytes.Repeat([]byte{0x02, 0x82}, psbSize/2)

// InputStream is one PT stream of an input: the whole of a raw trace, or
// the data of one CPU (one thread in per-thread mode) of a perf.data.
type InputStream struct {
	Name string // "" for a raw trace; "cpu N" or "tid N" (PerfStream.Name)
	CPU  int32  // -1 for a raw trace and in per-thread mode
	// Data is the stream; nil for a stream read from its file (Perf
	// opened by OpenPerfDataPT): Reader reads it.
	Data []byte

	perf *PerfStream // the perf.data stream read from its file
}

// Len is the stream's length in bytes.
func (s *InputStream) Len() int64 {
	if s.perf != nil {
		return s.perf.Len()
	}
	return int64(len(s.Data))
}

// Reader reads the stream from its first byte (PerfStream.Reader for a
// stream read from its file).
func (s *InputStream) Reader() io.Reader {
	if s.perf != nil {
		return s.perf.Reader()
	}
	return bytes.NewReader(s.Data)
}

// Input is the PT data of one input (a file), as ParseInput splits it.
type Input struct {
	Streams []InputStream
	// Perf is what the perf.data recorded besides the streams: the
	// decoder configuration (Perf.Config), the loss (Perf.LossSummary),
	// the TSC conversion. It is nil for a raw trace.
	Perf *PerfTrace
}

// ParseInput splits b, the content of a PT input, into its streams. A
// perf.data (IsPerfData; 'perf record -e intel_pt//', also cut short, as
// when perf was killed: the cut is loss in Perf.Truncated) gives a stream
// per CPU or thread; it is ErrNoPTData when it holds no PT data (with
// the Input, for its loss records). Anything else is a raw trace of one
// stream, which must hold a PSB packet (else ErrNoPSB). Streams alias b.
func ParseInput(b []byte) (*Input, error) {
	if !IsPerfData(b) {
		if !bytes.Contains(b, psbPattern) {
			return nil, fmt.Errorf("%w: no PSB packet in its %d bytes (decoding starts at a PSB)", ErrNoPSB, len(b))
		}
		return &Input{Streams: []InputStream{{CPU: -1, Data: b}}}, nil
	}
	pt, err := PerfDataPTTruncated(b)
	if err != nil {
		return nil, err
	}
	return perfInput(pt)
}

// PerfInput is ParseInput of a perf.data opened by OpenPerfDataPT (or
// parsed by PerfDataPT): the streams of pt, read from its file when pt
// does not hold them.
func PerfInput(pt *PerfTrace) (*Input, error) { return perfInput(pt) }

func perfInput(pt *PerfTrace) (*Input, error) {
	t := &Input{Perf: pt}
	if len(pt.Streams) == 0 {
		return t, fmt.Errorf("%w (no PERF_RECORD_AUXTRACE: was it recorded with -e intel_pt//?)", ErrNoPTData)
	}
	for i := range pt.Streams {
		s := &pt.Streams[i]
		in := InputStream{Name: s.Name(), CPU: s.CPU, Data: s.Data}
		if s.src != nil {
			in.perf = s
		}
		t.Streams = append(t.Streams, in)
	}
	return t, nil
}

// Config returns the decoder configuration the trace recorded (a
// perf.data's), or the zero Config.
func (t *Input) Config() Config {
	if t == nil || t.Perf == nil {
		return Config{}
	}
	return t.Perf.Config
}

// RangeError says that a byte range of ReadFile lies outside its file.
type RangeError struct {
	Name     string // the file
	Size     int64  // its size
	From, To uint64 // the range (To 0: to the end)
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("range %#x-%#x outside %s (%d bytes)", e.From, e.To, e.Name, e.Size)
}

// ReadFile reads a PT input: the file path or, when there is none of that
// name, a byte range of a file named as libipt's ptdump takes it,
// FILE:FROM[-TO] (offsets in C syntax: 0x hex, 0 octal; TO excluded, to
// the end without it). A range outside the file is a *RangeError.
func ReadFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil || !os.IsNotExist(err) {
		return b, err
	}
	name, from, to, ok := ParseRange(path)
	if !ok {
		return nil, err
	}
	rb, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if from >= uint64(len(rb)) || (to != 0 && to > uint64(len(rb))) {
		return nil, &RangeError{Name: name, Size: int64(len(rb)), From: from, To: to}
	}
	if to == 0 {
		to = uint64(len(rb))
	}
	return rb[from:to], nil
}

// ParseRange splits ptdump's FILE:FROM[-TO] (offsets in C syntax: 0x hex,
// 0 octal). ok is false when arg is not of that form or TO is not after
// FROM; to is 0 without -TO.
func ParseRange(arg string) (name string, from, to uint64, ok bool) {
	i := strings.LastIndexByte(arg, ':')
	if i <= 0 {
		return "", 0, 0, false
	}
	a, b, isRange := strings.Cut(arg[i+1:], "-")
	from, err := strconv.ParseUint(a, 0, 64)
	if err != nil {
		return "", 0, 0, false
	}
	if isRange {
		if to, err = strconv.ParseUint(b, 0, 64); err != nil || to <= from {
			return "", 0, 0, false
		}
	}
	return arg[:i], from, to, true
}
