package userevents

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// ParseValues turns field=value arguments ('iotap events write') into one
// value per field of s, in field order, for Event.Write: integers in Go
// syntax (0x.., 0..), strings as they are, other arrays and structs as
// hexadecimal bytes. Fields not given are zero (empty). The values are
// checked against the schema.
func (s *Schema) ParseValues(args []string) ([]any, error) {
	vals := make([]any, len(s.Fields))
	for i, f := range s.Fields {
		switch f.Kind {
		case KindInt, KindUint:
			vals[i] = 0
		case KindStruct:
			vals[i] = make([]byte, f.Size)
		default:
			vals[i] = ""
		}
	}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want field=value", a)
		}
		idx := -1
		for i := range s.Fields {
			if s.Fields[i].Name == k {
				idx = i
			}
		}
		if idx < 0 {
			var names []string
			for _, f := range s.Fields {
				names = append(names, f.Name)
			}
			return nil, fmt.Errorf("%s has no field %q (fields: %s)", s.Name, k, strings.Join(names, ", "))
		}
		f := s.Fields[idx]
		switch f.Kind {
		case KindInt:
			n, err := strconv.ParseInt(v, 0, f.Size*8)
			if err != nil {
				return nil, fmt.Errorf("field %s (%s): %q is not a %d-bit signed integer", k, f.Type, v, f.Size*8)
			}
			vals[idx] = n
		case KindUint:
			n, err := strconv.ParseUint(v, 0, f.Size*8)
			if err != nil {
				return nil, fmt.Errorf("field %s (%s): %q is not a %d-bit unsigned integer", k, f.Type, v, f.Size*8)
			}
			vals[idx] = n
		case KindStruct:
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != f.Size {
				return nil, fmt.Errorf("field %s (%s): want %d bytes in hex", k, f.Type, f.Size)
			}
			vals[idx] = b
		default:
			if f.String {
				vals[idx] = v
			} else {
				b, err := hex.DecodeString(v)
				if err != nil {
					return nil, fmt.Errorf("field %s (%s): want hex bytes", k, f.Type)
				}
				vals[idx] = b
			}
		}
	}
	// Check the values against the schema now, for a usage error.
	if _, err := s.AppendPayload(nil, vals...); err != nil {
		return nil, err
	}
	return vals, nil
}
