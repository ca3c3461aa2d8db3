package userevents

import (
	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/userevents/eventheader"
)

// NDJSONEvent is the kind of an event's record (docs/ndjson.md), written
// by 'iotap events record|read --json' and read back by timeline, report,
// export and cut.
const NDJSONEvent = "user_event"

// Formats and clocks of the "input" record of an events stream.
const (
	FormatTracefs  = "tracefs"            // an ftrace instance's ring buffer (events record)
	FormatPerfRing = "perf ring"          // perf_event rings (events record --perf)
	FormatPerfData = "perf.data"          // events read
	FormatStatus   = "user_events_status" // events status and list: tracefs' list of registered events
	// ClockTrace is the tracefs trace clock ('local': ns since boot).
	ClockTrace = "trace"
	// ClockPerf is perf's sample clock (ns since boot).
	ClockPerf = "perf"
)

// AppendNDJSONInput appends the "input" record that starts an events
// stream: the file read ("" for a live recording: null), its format and
// the clock of ts_ns.
func AppendNDJSONInput(b []byte, file, format, clock string) []byte {
	return ndjson.End(ndjson.Input(b, "events", file, format, clock))
}

// AppendNDJSON appends rec's user_event record (one line): ts_ns on the
// stream's clock, wall_ns (null unless the source relates it to the wall
// clock), cpu, tid (the tracepoint's common_pid: the kernel's task id),
// pid (the process, null unless the source records it: perf samples;
// 0 is the idle task),
// system, name and the fields by name. Integer fields are numbers, text
// fields strings and other byte fields hex. An EventHeader event has its
// name as Provider:Event, its fields formatted as LinuxTracepoints'
// perf-decode formats them, and an "eventheader" object with the header.
func AppendNDJSON(b []byte, rec *Recorded) []byte {
	b = ndjson.Begin(b, NDJSONEvent)
	b = ndjson.Uint(b, "ts_ns", rec.TS)
	if rec.Wall != 0 {
		b = ndjson.Int(b, "wall_ns", rec.Wall)
	} else {
		b = ndjson.Null(b, "wall_ns")
	}
	b = ndjson.Int(b, "cpu", int64(rec.CPU))
	tid := rec.PID
	if rec.Thread != 0 {
		tid = rec.Thread
	}
	b = ndjson.Int(b, "tid", int64(tid))
	if rec.HasProcess {
		b = ndjson.Int(b, "pid", int64(rec.Process))
	} else {
		b = ndjson.Null(b, "pid")
	}
	sys := rec.System
	if sys == "" {
		sys = System
	}
	b = ndjson.Str(b, "system", sys)
	if ev := rec.EventHeader; ev != nil {
		return appendEventHeaderNDJSON(b, rec, ev)
	}
	b = ndjson.Str(b, "name", rec.Name)
	b = ndjson.Open(b, "fields")
	for i := range rec.Values {
		v := &rec.Values[i]
		b = ndjson.AnyKey(b, v.Field.Name)
		switch {
		case v.Field.Kind == KindInt:
			b = ndjson.AppendInt(b, v.Int)
		case v.Field.Kind == KindUint:
			b = ndjson.AppendUint(b, v.Uint)
		case v.Field.String:
			b = ndjson.AppendStringBytes(b, v.Bytes)
		default:
			b = append(ndjson.AppendHex(append(b, '"'), v.Bytes), '"')
		}
	}
	b = ndjson.Close(b)
	return ndjson.End(b)
}

func appendEventHeaderNDJSON(b []byte, rec *Recorded, ev *eventheader.Event) []byte {
	b = ndjson.Key(b, "name") // "Provider:Event", without building the string
	b = ndjson.AppendString(b, ev.Name.Provider)
	b[len(b)-1] = ':'
	n := len(b)
	b = ndjson.AppendString(b, ev.EventName)
	b = append(b[:n], b[n+1:]...)
	b = ndjson.Open(b, "fields")
	for i := range ev.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = eventheader.AppendMember(b, &ev.Fields[i])
	}
	b = ndjson.Close(b)
	if !ev.HasMetadata {
		b = ndjson.Hex(b, "payload", ev.Payload)
	}
	h := &ev.Header
	b = ndjson.Open(b, "eventheader")
	b = ndjson.Str(b, "tracepoint", rec.Name)
	b = ndjson.Int(b, "id", int64(h.ID))
	b = ndjson.Int(b, "version", int64(h.Version))
	b = ndjson.Int(b, "level", int64(h.Level))
	b = ndjson.HexUint(b, "keyword", ev.Name.Keyword)
	b = ndjson.Int(b, "opcode", int64(h.Opcode))
	b = ndjson.Int(b, "tag", int64(h.Tag))
	if ev.Activity != nil {
		b = eventheader.AppendUUID(ndjson.Key(b, "activity"), ev.Activity)
	} else {
		b = ndjson.Null(b, "activity")
	}
	if ev.RelatedActivity != nil {
		b = eventheader.AppendUUID(ndjson.Key(b, "related_activity"), ev.RelatedActivity)
	} else {
		b = ndjson.Null(b, "related_activity")
	}
	b = ndjson.Close(b)
	return ndjson.End(b)
}

// Kinds of the records of 'iotap events status --json' and 'iotap events
// list --json' (docs/ndjson.md).
const (
	NDJSONStatus     = "user_event_status"
	NDJSONDefinition = "user_event_def"
)

// AppendStatusNDJSON appends the user_event_status record of a
// registered event: its tracepoint name and who has it enabled.
func AppendStatusNDJSON(b []byte, ev *StatusEvent) []byte {
	b = ndjson.Begin(b, NDJSONStatus)
	b = ndjson.Str(b, "name", ev.Name)
	return ndjson.End(appendUsedBy(b, ev.UsedBy))
}

// AppendDefinitionNDJSON appends the user_event_def record of a
// registered event: its system, tracepoint name, the command that
// registers it and its fields (s is nil when its format could not be
// read: command null, no fields).
func AppendDefinitionNDJSON(b []byte, system string, ev *StatusEvent, s *Schema) []byte {
	b = ndjson.Begin(b, NDJSONDefinition)
	b = ndjson.Str(b, "system", system)
	b = ndjson.Str(b, "name", ev.Name)
	if s == nil {
		b = ndjson.Null(b, "command")
	} else {
		b = ndjson.Str(b, "command", s.Command())
	}
	b = ndjson.OpenArray(b, "fields")
	if s != nil {
		for i := range s.Fields {
			f := &s.Fields[i]
			b = ndjson.OpenElem(b)
			b = ndjson.Str(b, "name", f.Name)
			b = ndjson.Str(b, "type", f.Type)
			b = ndjson.Int(b, "offset", int64(f.Offset))
			b = ndjson.Int(b, "size", int64(f.Size))
			b = ndjson.Close(b)
		}
	}
	b = ndjson.CloseArray(b)
	return ndjson.End(appendUsedBy(b, ev.UsedBy))
}

func appendUsedBy(b []byte, by []string) []byte {
	b = ndjson.OpenArray(b, "used_by")
	for _, u := range by {
		b = ndjson.StrElem(b, u)
	}
	return ndjson.CloseArray(b)
}
