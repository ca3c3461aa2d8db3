package userevents

import (
	"strconv"

	"github.com/iotap/iotap/userevents/eventheader"
)

// SchemaOf rebuilds the schema of a registered event from its format file
// (fields in order, types as registered), under name.
func SchemaOf(f *Format, name string) (*Schema, error) {
	var fields []string
	for _, ff := range f.Fields {
		if ff.Common {
			continue
		}
		d := ff.Type + " " + ff.Name
		if ff.Kind == KindStruct {
			d += " " + strconv.Itoa(ff.Size)
		}
		fields = append(fields, d)
	}
	return NewSchema(name, fields...)
}

// EventHeaderEvent lays out one EventHeader (LinuxTracepoints) event:
// EVENT with vals, of provider at level and keyword. It returns the
// schema to register (the tracepoint PROVIDER_L<level>K<keyword>) and the
// payload to write with WriteOnceRaw: 'iotap events write --eventheader'.
func EventHeaderEvent(provider, event string, level uint8, keyword uint64, vals []eventheader.Value) (*Schema, []byte, error) {
	n := eventheader.Name{Provider: provider, Level: level, Keyword: keyword}
	payload, err := eventheader.Append(nil, eventheader.Header{Level: level}, event, vals)
	if err != nil {
		return nil, nil, err
	}
	s, err := ParseCommand(n.String() + " " + eventheader.CommandTypes)
	if err != nil {
		return nil, nil, err
	}
	return s, payload, nil
}
