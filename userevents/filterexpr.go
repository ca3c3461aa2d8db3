package userevents

import (
	"strings"

	"github.com/iotap/iotap/filter"
)

// FilterFields returns the fields a display filter (package filter) can
// name on recorded events: event.name, event.system, event.cpu,
// event.common_pid, event.ts (trace clock, nanoseconds), and event.FIELD
// for each field of the event's format (event.status, event.path): a
// number or a string as the format says, absent from events without that
// field. EventHeader events expose their header fields the same way.
func FilterFields() *filter.Table[Recorded] {
	t := filter.NewTable(
		filter.Field[Recorded]{Name: "event.name", Doc: "event name (without the user_events: system; Provider:Event for EventHeader events, as printed)",
			Str: func(r *Recorded) (string, bool) { return r.DisplayName(), true }},
		filter.Field[Recorded]{Name: "event.system", Doc: "tracefs system (user_events)",
			Str: func(r *Recorded) (string, bool) { return r.System, r.System != "" }},
		filter.Field[Recorded]{Name: "event.cpu", Doc: "CPU the event was recorded on",
			Num: func(r *Recorded) (filter.Int, bool) { return filter.Signed(int64(r.CPU)), true }},
		filter.Field[Recorded]{Name: "event.common_pid", Doc: "common_pid of the record (the format's own pid field, if any, is event.pid)",
			Num: func(r *Recorded) (filter.Int, bool) { return filter.Signed(int64(r.PID)), true }},
		filter.Field[Recorded]{Name: "event.ts", Doc: "timestamp on the trace clock, nanoseconds",
			Num: func(r *Recorded) (filter.Int, bool) { return filter.Uint(r.TS), true }},
	)
	t.Dynamic = func(name string) (filter.Field[Recorded], bool) {
		field, ok := strings.CutPrefix(name, "event.")
		if !ok || field == "" {
			return filter.Field[Recorded]{}, false
		}
		find := func(r *Recorded) *Value {
			for i := range r.Values {
				if r.Values[i].Field.Name == field {
					return &r.Values[i]
				}
			}
			return nil
		}
		return filter.Field[Recorded]{Name: name,
			Num: func(r *Recorded) (filter.Int, bool) {
				v := find(r)
				switch {
				case v == nil:
				case v.Field.Kind == KindInt:
					return filter.Signed(v.Int), true
				case v.Field.Kind == KindUint:
					return filter.Uint(v.Uint), true
				}
				return filter.Int{}, false
			},
			Str: func(r *Recorded) (string, bool) {
				v := find(r)
				if v == nil || v.Field.Kind == KindInt || v.Field.Kind == KindUint {
					return "", false
				}
				return string(v.Bytes), true
			}}, true
	}
	return t
}

// ParseFilter compiles a display-filter expression over FilterFields.
func ParseFilter(expr string) (func(*Recorded) bool, error) {
	return filter.ParseCompile(expr, FilterFields())
}
