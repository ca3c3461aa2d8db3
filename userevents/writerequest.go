package userevents

import (
	"errors"
	"fmt"
	"strings"

	"github.com/iotap/iotap/tracefs"
	"github.com/iotap/iotap/userevents/eventheader"
)

// ArgError is an argument of an event to write that is not valid (its
// name, a field=value, an EventHeader PROVIDER:EVENT or level); nothing
// was written. Arg says which: "name", "value", "level".
type ArgError struct {
	Arg string
	Err error
}

func (e *ArgError) Error() string { return e.Err.Error() }
func (e *ArgError) Unwrap() error { return e.Err }

// WriteRequest is one event to write as 'iotap events write NAME
// field=value...' takes it: Schema registers the event if needed
// ('--register NAME FIELDS'); without one the event must be registered
// and is written with its registered fields.
type WriteRequest struct {
	Name   string
	Schema *Schema  // nil: the registered event's fields (ReadFormat)
	Args   []string // field=value, as Schema.ParseValues takes them
	Flags  Flags    // register flags (Persist)
	// Register, if set, is the event's 'NAME FIELDS' (--register): Check
	// parses it into Schema.
	Register string
	// EventHeader writes Name, PROVIDER:EVENT, as an EventHeader event at
	// Level and Keyword (--eventheader, --level, --keyword;
	// EventHeaderArgs lays it out), Args as name[:type]=value.
	EventHeader bool
	Level       uint8
	Keyword     uint64
	vals        []any
	payload     []byte
}

// Check checks what it can without the kernel: the name, and with a
// Schema, that it names the event and the values; with EventHeader, the
// whole event. Its errors are *ArgError, those of Register and
// EventHeader worded with the flags of 'iotap events write'.
func (w *WriteRequest) Check() error {
	if w.EventHeader {
		return w.checkEventHeader()
	}
	if w.Register != "" && ValidName(w.Name) {
		s, err := ParseCommand(w.Register)
		if err != nil {
			return &ArgError{"register", fmt.Errorf("--register: %w", err)}
		}
		if s.Name != w.Name {
			return &ArgError{"register", fmt.Errorf("--register names %q, not %q", s.Name, w.Name)}
		}
		w.Schema = s
	}
	if err := CheckName(w.Name); err != nil {
		return err
	}
	if w.Schema == nil {
		return nil
	}
	if w.Schema.Name != w.Name {
		return &ArgError{"name", fmt.Errorf("the schema names %q, not %q", w.Schema.Name, w.Name)}
	}
	vals, err := w.Schema.ParseValues(w.Args)
	if err != nil {
		return &ArgError{"value", err}
	}
	w.vals = vals
	return nil
}

// Write checks w and writes the event once on fs (WriteOnce; nil:
// tracefs.Find). Without a
// Schema it takes the registered event's fields: an *ArgError wrapping
// ErrNotFound when it is not registered. When nothing records the event,
// nothing is written and the error is (or wraps) ErrNotEnabled.
func (w *WriteRequest) Write(fs *tracefs.FS) error {
	if err := w.Check(); err != nil {
		return err
	}
	fs, err := findFS(fs)
	if err != nil {
		return err
	}
	if w.EventHeader {
		return WriteOnceRaw(fs, w.Schema, w.Flags, w.payload)
	}
	s := w.Schema
	if s == nil {
		f, err := ReadFormat(fs, System, w.Name)
		if errors.Is(err, ErrNotFound) {
			return &ArgError{"name", fmt.Errorf("event %s is not registered: %w", w.Name, err)}
		}
		if err != nil {
			return err
		}
		if s, err = SchemaOf(f, w.Name); err != nil {
			return err
		}
		if w.vals, err = s.ParseValues(w.Args); err != nil {
			return &ArgError{"value", err}
		}
	}
	return WriteOnce(fs, s, w.Flags, w.vals...)
}

// checkEventHeader lays out the EventHeader event (EventHeaderArgs).
func (w *WriteRequest) checkEventHeader() error {
	s, payload, err := EventHeaderArgs(w.Name, w.Level, w.Keyword, w.Args)
	var ae *ArgError
	if errors.As(err, &ae) {
		switch ae.Arg {
		case "level":
			return &ArgError{ae.Arg, fmt.Errorf("--%w", ae.Err)}
		case "name":
			return &ArgError{ae.Arg, fmt.Errorf("--eventheader: %w", ae.Err)}
		}
		return err
	}
	w.Schema, w.payload = s, payload
	return nil
}

// Tracepoint is the name of the event's tracepoint: Name, or with
// EventHeader (after Check) PROVIDER_L<level>K<keyword>.
func (w *WriteRequest) Tracepoint() string {
	if w.EventHeader && w.Schema != nil {
		return w.Schema.Name
	}
	return w.Name
}

// EventHeaderArgs lays out an EventHeader event as 'iotap events write
// --eventheader PROVIDER:EVENT name[:type]=value...' takes it
// (eventheader.ParseArg), at level (1..255) and keyword: the schema to
// register and the payload to write with WriteOnceRaw. Errors of the
// arguments are *ArgError.
func EventHeaderArgs(name string, level uint8, keyword uint64, args []string) (*Schema, []byte, error) {
	provider, event, ok := strings.Cut(name, ":")
	if !ok || provider == "" || event == "" {
		return nil, nil, &ArgError{"name", fmt.Errorf("%q is not PROVIDER:EVENT", name)}
	}
	if level == 0 {
		return nil, nil, &ArgError{"level", errors.New("level 0 is not a level (1..255)")}
	}
	var vals []eventheader.Value
	for _, a := range args {
		v, err := eventheader.ParseArg(a)
		if err != nil {
			return nil, nil, &ArgError{"value", err}
		}
		vals = append(vals, v)
	}
	s, payload, err := EventHeaderEvent(provider, event, level, keyword, vals)
	if err != nil {
		return nil, nil, &ArgError{"name", err}
	}
	return s, payload, nil
}
