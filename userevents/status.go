package userevents

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Status is the content of tracefs's user_events_status.
type Status struct {
	Events []StatusEvent
	Active int // registered events
	Busy   int // events some tracer has enabled
}

// StatusEvent is one event line of user_events_status.
type StatusEvent struct {
	Name   string   // tracepoint name: NAME, or NAME.ID for multi-format events
	UsedBy []string // "ftrace", "perf", "other": who has it enabled
}

// ParseStatus parses user_events_status: one line per event
// ("NAME" or "NAME # Used by ftrace perf"), a blank line, then
// "Active: N" and "Busy: N". Linux before 6.4 wrote "INDEX:NAME" and a
// "Max:" line; both are accepted.
func ParseStatus(data []byte) (*Status, error) {
	st := &Status{}
	totals := false
	for n := 1; len(data) > 0; n++ {
		var l []byte
		l, data, _ = bytes.Cut(data, []byte{'\n'})
		line := strings.TrimSpace(string(l))
		if line == "" {
			totals = len(st.Events) > 0 || totals
			continue
		}
		if k, v, ok := strings.Cut(line, ": "); ok && (k == "Active" || k == "Busy" || k == "Max") {
			x, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, &FormatError{n, fmt.Sprintf("bad count %q", line)}
			}
			switch k {
			case "Active":
				st.Active = x
			case "Busy":
				st.Busy = x
			}
			totals = true
			continue
		}
		if totals {
			return nil, &FormatError{n, fmt.Sprintf("event line %q after the totals", line)}
		}
		name, comment, _ := strings.Cut(line, "#")
		name = strings.TrimSpace(name)
		if i := strings.IndexByte(name, ':'); i >= 0 { // old "INDEX:NAME"
			if _, err := strconv.Atoi(name[:i]); err == nil {
				name = name[i+1:]
			}
		}
		if name == "" || strings.ContainsAny(name, " \t") {
			return nil, &FormatError{n, fmt.Sprintf("bad event line %q", line)}
		}
		ev := StatusEvent{Name: name}
		comment = strings.TrimSpace(comment)
		if rest, ok := strings.CutPrefix(comment, "Used by"); ok {
			for _, w := range strings.Fields(rest) {
				if strings.HasPrefix(w, "FLAG:") {
					continue
				}
				ev.UsedBy = append(ev.UsedBy, w)
			}
		}
		st.Events = append(st.Events, ev)
	}
	return st, nil
}

// Event returns the status line of the event called name.
func (s *Status) Event(name string) (StatusEvent, bool) {
	for _, e := range s.Events {
		if e.Name == name {
			return e, true
		}
	}
	return StatusEvent{}, false
}
