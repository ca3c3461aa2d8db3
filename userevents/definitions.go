package userevents

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/iotap/iotap/tracefs"
)

// WriteText writes the status as 'iotap events status' prints it: a line
// per event, its name and who has it enabled ("-": nobody), then the
// totals.
func (s *Status) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, ev := range s.Events {
		used := "-"
		if len(ev.UsedBy) > 0 {
			used = strings.Join(ev.UsedBy, ",")
		}
		fmt.Fprintf(bw, "%-40s used by: %s\n", ev.Name, used)
	}
	fmt.Fprintf(bw, "active %d, busy %d\n", s.Active, s.Busy)
	return bw.Flush()
}

// AppendNDJSON appends a user_event_status record per event
// (AppendStatusNDJSON).
func (s *Status) AppendNDJSON(b []byte) []byte {
	for i := range s.Events {
		b = AppendStatusNDJSON(b, &s.Events[i])
	}
	return b
}

// Definition is a registered event with its fields: 'iotap events list'.
type Definition struct {
	System string // System, or MultiSystem for a multi-format event (NAME.ID)
	Event  StatusEvent
	Schema *Schema // nil when its format could not be read
}

// ReadDefinitions reads the registered events of f (ReadStatus) and the
// format of each, in the order of user_events_status. An event whose
// format cannot be read (unregistered meanwhile, not readable) has a nil
// Schema. f nil is tracefs.Find's.
func ReadDefinitions(f *tracefs.FS) ([]Definition, error) {
	f, err := findFS(f)
	if err != nil {
		return nil, err
	}
	st, err := ReadStatus(f)
	if err != nil {
		return nil, err
	}
	defs := make([]Definition, len(st.Events))
	for i, ev := range st.Events {
		d := Definition{System: System, Event: ev}
		if strings.Contains(ev.Name, ".") {
			d.System = MultiSystem
		}
		if format, err := ReadFormat(f, d.System, ev.Name); err == nil {
			if s, err := SchemaOf(format, strings.SplitN(ev.Name, ".", 2)[0]); err == nil {
				d.Schema = s
			}
		}
		defs[i] = d
	}
	return defs, nil
}

// Command is the command that registers the event (Schema.Command), or
// "NAME (format unreadable)".
func (d *Definition) Command() string {
	if d.Schema == nil {
		return d.Event.Name + " (format unreadable)"
	}
	return d.Schema.Command()
}

// AppendNDJSON appends the event's user_event_def record
// (AppendDefinitionNDJSON).
func (d *Definition) AppendNDJSON(b []byte) []byte {
	return AppendDefinitionNDJSON(b, d.System, &d.Event, d.Schema)
}

// Write writes the status as 'iotap events status' prints it: WriteText,
// or with asJSON the NDJSON stream (its "input" record, then a
// user_event_status record per event).
func (s *Status) Write(w io.Writer, asJSON bool) error {
	if !asJSON {
		return s.WriteText(w)
	}
	_, err := w.Write(s.AppendNDJSON(AppendNDJSONInput(nil, "", FormatStatus, "")))
	return err
}

// WriteDefinitions writes defs as 'iotap events list' prints them: a
// line per event, SYSTEM/NAME and its Command, or with asJSON the NDJSON
// stream (its "input" record, then a user_event_def record per event).
func WriteDefinitions(w io.Writer, defs []Definition, asJSON bool) error {
	bw := bufio.NewWriter(w)
	if asJSON {
		b := AppendNDJSONInput(nil, "", FormatStatus, "")
		for i := range defs {
			b = defs[i].AppendNDJSON(b)
		}
		bw.Write(b)
	} else {
		for i := range defs {
			fmt.Fprintf(bw, "%s/%s\t%s\n", defs[i].System, defs[i].Event.Name, defs[i].Command())
		}
	}
	return bw.Flush()
}
