package userevents

import (
	"github.com/iotap/iotap/userevents/eventheader"
)

// IsEventHeader reports whether f is the format of an EventHeader
// tracepoint (LinuxTracepoints' convention): a name Provider_L<level>K<keyword>
// and exactly the fields eventheader.CommandTypes declares, so that the
// record's payload after the common fields is an eventheader, its
// extensions and the event's fields.
func IsEventHeader(f *Format) bool {
	if _, ok := eventheader.ParseName(f.Name); !ok {
		return false
	}
	want := [...]struct {
		name string
		size int
	}{{"eventheader_flags", 1}, {"version", 1}, {"id", 2}, {"tag", 2}, {"opcode", 1}, {"level", 1}}
	i := 0
	start := -1
	for _, ff := range f.Fields {
		if ff.Common {
			continue
		}
		if i >= len(want) || ff.Name != want[i].name || ff.Size != want[i].size {
			return false
		}
		if i == 0 {
			start = ff.Offset
		} else if ff.Offset != start+eventheaderOffsets[i] {
			return false
		}
		i++
	}
	return i == len(want)
}

var eventheaderOffsets = [...]int{0, 1, 2, 4, 6, 7}

// eventHeader decodes rec's EventHeader event when f is an EventHeader
// format (cached in f), else returns nil.
func eventHeader(f *Format, rec []byte) (*eventheader.Event, error) {
	if f.eh == 0 {
		f.eh = -1
		if IsEventHeader(f) {
			f.eh = 1
		}
	}
	if f.eh < 0 {
		return nil, nil
	}
	return DecodeEventHeader(f, rec)
}

// DecodeEventHeader decodes the record rec (common fields first) of an
// EventHeader tracepoint f (IsEventHeader).
func DecodeEventHeader(f *Format, rec []byte) (*eventheader.Event, error) {
	ff, ok := f.Field("eventheader_flags")
	if !ok || ff.Offset > len(rec) {
		return nil, &RecordError{Event: f.Name, Field: "eventheader_flags", Offset: 0, Msg: "record shorter than the eventheader"}
	}
	return eventheader.Decode(f.Name, rec[ff.Offset:])
}

// appendEventHeaderText writes "SECONDS.NANOS [CPU] PID Provider:Event:
// field=value …" with the values as in JSON.
func appendEventHeaderText(dst []byte, rec *Recorded) []byte {
	r := *rec
	r.EventHeader, r.Values = nil, nil
	ev := rec.EventHeader
	r.Name = rec.DisplayName()
	dst = AppendText(dst, &r)
	for i := range ev.Fields {
		dst = append(dst, ' ')
		dst = append(dst, ev.Fields[i].Name...)
		dst = append(dst, '=')
		dst = eventheader.AppendFieldValue(dst, &ev.Fields[i])
	}
	if !ev.HasMetadata {
		dst = append(dst, " payload="...)
		dst = eventheader.AppendValue(dst, &eventheader.Field{Encoding: eventheader.EncBinaryLength16Char8, Data: ev.Payload})
	}
	return dst
}
