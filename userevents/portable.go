package userevents

import (
	"strconv"
	"strings"

	"github.com/iotap/iotap/userevents/eventheader"
)

// The declarations here are shared by the Linux producer and recorder and
// by the portable decoders (formats, NDJSON output), so that decoding
// builds on every GOOS.

// Flags of a registration.
type Flags uint16

// Registration flags (include/uapi/linux/user_events.h).
const (
	// Persist keeps the event after its last reference is gone (Linux
	// 6.4; needs CAP_PERFMON or CAP_SYS_ADMIN, else ErrPermission).
	Persist Flags = 1 << 0
	// MultiFormat lets several formats share a name (Linux 6.10); the
	// tracefs event is then user_events_multi/NAME.ID.
	MultiFormat Flags = 1 << 1
)

// smallPayload is the largest fixed-size payload encoded on the stack.
const smallPayload = 128

// Recorded is one event read back from the ring buffer. Values and their
// byte slices are reused by the next event: copy what you keep.
type Recorded struct {
	System string
	Name   string
	TS     uint64 // trace clock (local: nanoseconds since boot)
	// Wall is the wall-clock time of TS in nanoseconds since the Unix
	// epoch when the source relates its clock to the wall clock (perf.data
	// with clock data), else 0.
	Wall   int64
	CPU    int
	PID    int32
	Format *Format
	Values []Value
	// EventHeader is the decoded event when the tracepoint follows the
	// EventHeader convention (Provider_L<level>K<keyword>, see
	// DecodeEventHeader); Values then hold only the header fields.
	EventHeader *eventheader.Event
	// Process and Thread are the sample's pid and tid when the source
	// records them (HasProcess: perf samples, in the recording process's
	// pid namespace), else 0. Pid 0 is a real value: the idle task, the
	// kernel.
	Process, Thread int32
	HasProcess      bool
}

// DisplayName is the event's name as events read prints it: Name, or
// "Provider:Event" for an EventHeader event (whose Name is the
// tracepoint, Provider_L<level>K<keyword>).
func (r *Recorded) DisplayName() string {
	if ev := r.EventHeader; ev != nil {
		return ev.Name.Provider + ":" + ev.EventName
	}
	return r.Name
}

// ValidTracepoint checks an event directory name: a valid name, or
// NAME.HEX for multi-format events.
func ValidTracepoint(name string) bool {
	base, id, ok := strings.Cut(name, ".")
	if !ok {
		return ValidName(name)
	}
	if _, err := strconv.ParseUint(id, 16, 64); err != nil || len(id) > 16 {
		return false
	}
	return ValidName(base)
}
