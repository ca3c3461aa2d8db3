package userevents

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/tracefs"
)

// RecordLinesOptions configure RecordLines.
type RecordLinesOptions struct {
	FS     *tracefs.FS // nil: tracefs.Find()
	Events []Target
	// Perf reads through perf rings (perf_event_open on each event's
	// tracepoint, as perf record does) instead of a private ftrace
	// instance.
	Perf bool
	// BufferKB is the ring per CPU (with Perf: per event and CPU, rounded
	// up to a power of two pages); 0 the kernel's default.
	BufferKB int
	JSON     bool   // NDJSON: the "input" record (AppendNDJSONInput), then AppendNDJSON; else AppendText
	Count    uint64 // stop after this many events (0: no limit)
	// OnStart, if set, is called once the events are enabled.
	OnStart func()
	// Logf, if set, receives notes: the tracefs instances of killed
	// recorders removed before starting.
	Logf func(format string, args ...any)
	// Interval, if > 0, calls OnInterval every Interval with the events
	// written in it and their bytes (the lines), as perf stat -I does, and
	// once more at the end: the intervals add up to Result.Written.
	// OnInterval runs on a goroutine of its own, never concurrently.
	Interval   time.Duration
	OnInterval func(rotate.Stats)
}

// Target is a user event to record: Name (a multi-format name records
// the user_events_multi system's tracepoint), and Schema to register it
// first (nil: it must already be registered, else the error wraps
// ErrNotFound).
type Target struct {
	Name   string
	Schema *Schema
}

// ParseTarget reads an event argument as 'iotap events record' and
// 'iotap capture --events' take it: "NAME" (an event that must already be
// registered) or "NAME FIELDS" (registered for the recording, e.g.
// "req u32 id; char[16] tag"; see ParseCommand).
func ParseTarget(arg string) (Target, error) {
	arg = strings.TrimSpace(arg)
	if strings.ContainsAny(arg, " \t") {
		s, err := ParseCommand(arg)
		if err != nil {
			return Target{}, err
		}
		return Target{Name: s.Name, Schema: s}, nil
	}
	if !ValidTracepoint(arg) {
		return Target{}, errors.New("letters, digits and '_' only")
	}
	return Target{Name: arg}, nil
}

// ParseTargets is ParseTarget of each argument; an error names the
// argument ("\"ARG\": ...").
func ParseTargets(args []string) ([]Target, error) {
	var ts []Target
	for _, arg := range args {
		t, err := ParseTarget(arg)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", strings.TrimSpace(arg), err)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// RecordLinesResult is what RecordLines recorded.
type RecordLinesResult struct {
	Written           uint64 // lines written
	Events, Lost, Bad uint64 // read, lost (ring-buffer or perf counts), undecodable
}

// Loss says what the recording lost: "N event(s) lost, M undecodable",
// or "" when every event was recorded and decoded.
func (r RecordLinesResult) Loss() string {
	if r.Lost == 0 && r.Bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d event(s) lost, %d undecodable", r.Lost, r.Bad)
}

// IsNDJSONInput reports whether line is an NDJSON "input" record, the
// header of an events stream: rotate.LineOptions.Header for a ring of
// NDJSON files, so that each starts with it and reads on its own.
func IsNDJSONInput(line []byte) bool {
	return bytes.HasPrefix(line, []byte(`{"kind":"input"`))
}
