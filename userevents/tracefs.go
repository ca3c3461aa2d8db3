package userevents

import (
	"errors"
	"os"
	"strings"

	"github.com/iotap/iotap/tracefs"
)

// ReadStatus reads and parses user_events_status (f nil: tracefs.Find).
func ReadStatus(f *tracefs.FS) (*Status, error) {
	f, err := findFS(f)
	if err != nil {
		return nil, err
	}
	b, err := f.ReadFile("user_events_status")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Op: "status", Err: ErrNotSupported, Errno: err, Hint: "the kernel needs CONFIG_USER_EVENTS"}
		}
		return nil, &Error{Op: "status", Err: ErrPermission, Errno: err}
	}
	return ParseStatus(b)
}

// ReadFormat reads and parses events/SYSTEM/NAME/format.
func ReadFormat(f *tracefs.FS, system, name string) (*Format, error) {
	if system != System && system != MultiSystem || !ValidTracepoint(name) {
		return nil, &Error{Op: "format", Event: name, Err: ErrInvalidCommand, Hint: "bad event name"}
	}
	b, err := f.ReadFile("events", system, name, "format")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Op: "format", Event: name, Err: ErrNotFound, Errno: err}
		}
		return nil, &Error{Op: "format", Event: name, Err: ErrInvalid, Errno: err}
	}
	return ParseFormat(b)
}

// Enable enables or disables events/SYSTEM/NAME in the tracefs at f (the
// top-level buffer, or an instance). The name is checked before any path
// is built from it.
func Enable(f *tracefs.FS, system, name string, on bool) error {
	if system != System && system != MultiSystem || !ValidTracepoint(name) {
		return &Error{Op: "enable", Event: name, Err: ErrInvalidCommand, Hint: "bad event name"}
	}
	v := []byte("0")
	if on {
		v = []byte("1")
	}
	if err := f.WriteFile(v, "events", system, name, "enable"); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &Error{Op: "enable", Event: name, Err: ErrNotFound, Errno: err}
		}
		return &Error{Op: "enable", Event: name, Err: ErrInvalid, Errno: err}
	}
	return nil
}

// Tracepoint finds the tracefs event of a registered schema: System/NAME
// for single-format events; for multi-format events the NAME.ID under
// MultiSystem whose format matches the schema's fields.
func Tracepoint(f *tracefs.FS, s *Schema, flags Flags) (system, name string, err error) {
	if flags&MultiFormat == 0 {
		return System, s.Name, nil
	}
	dir, err := f.Path("events", MultiSystem)
	if err != nil {
		return "", "", err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", "", &Error{Op: "format", Event: s.Name, Err: ErrNotFound, Errno: err}
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), s.Name+".") || !ValidTracepoint(e.Name()) {
			continue
		}
		ff, err := ReadFormat(f, MultiSystem, e.Name())
		if err == nil && ff.Matches(s) {
			return MultiSystem, e.Name(), nil
		}
	}
	return "", "", &Error{Op: "format", Event: s.Name, Err: ErrNotFound, Hint: "no " + MultiSystem + " event with these fields"}
}
