package timeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/iotap/iotap/intelpt"
)

// Clocks is the clock sidecar of a capture (clocks.json): for each source,
// the offset that maps its own clock onto one common clock, and markers
// written to every source with the common clock's time.
//
// The sources' own clocks (what Export reads from each input) are:
//
//	usb (pcap, pcapng, binary)  wall clock (CLOCK_REALTIME), microseconds
//	usb (text 1t/1u)            monotonic microseconds modulo 4096 s; Export
//	                            unwraps it: the source clock is the stamp plus
//	                            4096 s per wrap seen since the first event
//	mmio                        the ftrace clock of the trace instance
//	                            (trace_clock, "local" by default: ns since boot)
//	events (NDJSON)             the tracefs trace clock, nanoseconds
//	pt                          TSC ticks; TSC.ToNS maps them to nanoseconds
//	                            (perf's time_zero/time_mult/time_shift)
//
// A source's common-clock time is its own time in nanoseconds plus
// OffsetNS.
type Clocks struct {
	// Version is the capture directory format (package capture); absent
	// in version 1 files. ReadClocks refuses a version it does not know.
	Version int `json:"version,omitempty"`
	// Common names the common clock (informative, e.g. "CLOCK_MONOTONIC").
	Common string `json:"common"`
	// Sources maps a source kind ("usb", "mmio", "events", "pt") or an
	// input's file name (which wins) to its clock.
	Sources map[string]SourceClock `json:"sources"`
	// Markers are instants on the common clock shown on every source.
	Markers []Marker `json:"markers,omitempty"`
}

// SourceClock maps one source's clock to the common clock.
type SourceClock struct {
	// Clock names the source's clock (informative: "usbmon-text",
	// "realtime", "local", "mono", "tsc"...).
	Clock string `json:"clock,omitempty"`
	// OffsetNS is added to the source's time in nanoseconds.
	OffsetNS int64 `json:"offset_ns"`
	// TSC converts TSC ticks (PT) to nanoseconds before OffsetNS.
	TSC *TSCConversion `json:"tsc,omitempty"`
}

// TSCConversion is perf's TSC to time conversion (perf_event_mmap_page),
// the type of intelpt's capture directory: ns = Zero + (tsc * Mult) >> Shift.
// A perf.data file's PERF_RECORD_TIME_CONV gives it when the clocks file
// does not.
type TSCConversion = intelpt.TSCConversion

// Marker is an instant on the common clock.
type Marker struct {
	Name string `json:"name"`
	NS   int64  `json:"ns"`
}

// ClocksVersion is the newest clocks file version ReadClocks reads.
const ClocksVersion = 1

// ErrClocks is wrapped by errors in a clocks file.
var ErrClocks = errors.New("bad clocks file")

// ReadClocks parses a clocks file.
func ReadClocks(r io.Reader) (*Clocks, error) {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	var c Clocks
	if err := dec.Decode(&c); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: byte %d: %v", ErrClocks, se.Offset, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrClocks, err)
	}
	if c.Version > ClocksVersion {
		return nil, fmt.Errorf("%w: version %d is newer than this iotap reads (%d)", ErrClocks, c.Version, ClocksVersion)
	}
	for k, s := range c.Sources {
		if s.TSC != nil && s.TSC.Shift > 63 {
			return nil, fmt.Errorf("%w: source %q: time_shift %d > 63", ErrClocks, k, s.TSC.Shift)
		}
	}
	return &c, nil
}

// LoadClocks reads a clocks file.
func LoadClocks(path string) (*Clocks, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := ReadClocks(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// WriteClocks writes c as indented JSON.
func WriteClocks(w io.Writer, c *Clocks) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// lookup returns the clock of the input at path of kind kind.
func (c *Clocks) lookup(path string, kind Kind) (SourceClock, bool) {
	if c == nil {
		return SourceClock{}, false
	}
	if s, ok := c.Sources[filepath.Base(path)]; ok {
		return s, true
	}
	s, ok := c.Sources[string(kind)]
	return s, ok
}
