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
	vals   []any
}

// Check checks what it can without the kernel: the name, and with a
// Schema, that it names the event and the values. Its errors are
// *ArgError.
func (w *WriteRequest) Check() error {
	if !ValidName(w.Name) {
		return &ArgError{"name", fmt.Errorf("bad event name %q", w.Name)}
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

// Write checks w and writes the event once on fs (WriteOnce). Without a
// Schema it takes the registered event's fields: an *ArgError wrapping
// ErrNotFound when it is not registered. When nothing records the event,
// nothing is written and the error is (or wraps) ErrNotEnabled.
func (w *WriteRequest) Write(fs *tracefs.FS) error {
	if err := w.Check(); err != nil {
		return err
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
