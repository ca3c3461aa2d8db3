package capture

import (
	"fmt"
	"io"
	"time"

	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/timeline"
	"github.com/iotap/iotap/userevents"
)

// Version is the version of the capture directory format Run writes
// (clocks.json's "version"; a clocks.json without it is version 1).
const Version = timeline.ClocksVersion

// Names of the files of a capture directory.
const (
	USBFile    = "usb.pcapng"    // usbmon events, pcapng (link type 220), wall clock
	MMIOFile   = "mmio.log"      // the mmiotrace log, ftrace trace clock
	EventsFile = "events.ndjson" // user events, one JSON object per line, trace clock
	ClocksFile = "clocks.json"   // timeline.Clocks: per source, the offset onto CLOCK_MONOTONIC
)

// Marker texts written to every source when the capture starts and ends.
const (
	StartMarker = "iotap capture start"
	EndMarker   = "iotap capture end"
)

// markerCommand registers the marker user event: its mono field is the
// CLOCK_MONOTONIC time it was written at.
const markerCommand = timeline.MarkerEvent + " u64 mono; char[64] text"

// Event is a user event to record: Name in the user_events system, and
// Schema to register it first (nil: it must already be registered).
// userevents.ParseTarget reads one as 'iotap capture --events' takes it.
type Event = userevents.Target

// Options say what Run captures.
type Options struct {
	// Dir is the capture directory: created 0700, or an existing empty one.
	Dir string
	// USB captures usbmon, all buses or Bus (1-255).
	USB bool
	Bus int
	// MMIO captures mmiotrace; Bind, when set, is the PCI device unbound
	// before and bound again while tracing.
	MMIO bool
	Bind *mmiotrace.PCIAddr
	// Events are the user events to record.
	Events []Event
	// Command is run during the capture, which stops when it exits; with
	// MMIO it is started by mmiotrace.Capture once tracing.
	Command        []string
	Stdout, Stderr io.Writer // Command's output
	// Duration stops the capture after this long (0: at the end of
	// Command, once Bind is bound, or when the context is done).
	Duration time.Duration
	// BufferKB is the per-CPU ring of the user events instance (0: the
	// kernel's default).
	BufferKB int
	// Logf, when set, receives progress and warnings ("usb: 12 events").
	Logf func(format string, args ...any)
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// Result is what Run captured.
type Result struct {
	Dir string
	// Clocks is what was written to clocks.json.
	Clocks *timeline.Clocks
	// Loss lists the sources that lost events ("usb: 3 events dropped by
	// the kernel"); empty when nothing was lost.
	Loss []string
	// Lost is the same per source, with counts, as written to the
	// directory's LossFile.
	Lost []SourceLoss
}

// EventNotFoundError is returned when a user event to record is not
// registered and Event.Schema does not register it.
type EventNotFoundError struct {
	Name string
	Err  error // wraps userevents.ErrNotFound
}

func (e *EventNotFoundError) Error() string { return fmt.Sprintf("%s: %v", e.Name, e.Err) }
func (e *EventNotFoundError) Unwrap() error { return e.Err }

// ErrNotSupported is the module's "not supported" sentinel (the same value
// as usbmon.ErrNotSupported and the others).
var ErrNotSupported = iunix.ErrNotSupported
