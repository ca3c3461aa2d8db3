package userevents

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Format is a tracefs event format file (events/SYSTEM/EVENT/format): the
// layout of the event's records in the ring buffer.
type Format struct {
	Name     string
	ID       int // the record's common_type
	Fields   []FormatField
	PrintFmt string
	// Size is the end of the last fixed field.
	Size int

	eh int8 // IsEventHeader, cached: 0 not known yet, 1 yes, -1 no
}

// FormatField is one field line of a format file.
type FormatField struct {
	Type   string // "u32", "char[16]", "__rel_loc char[]", "int"
	Name   string
	Offset int
	Size   int
	Signed bool
	Common bool // common_type, common_flags, common_preempt_count, common_pid
	Kind   Kind
	String bool // NUL-terminated text
}

// FormatError reports a malformed format file with its line number.
type FormatError struct {
	Line int
	Msg  string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("userevents: format file line %d: %s", e.Line, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FormatError) Unwrap() error { return ErrInvalid }

// maxRecord bounds offsets and sizes accepted from a format file.
const maxRecord = 1 << 16

// ParseFormat parses a format file.
func ParseFormat(data []byte) (*Format, error) {
	f := &Format{ID: -1}
	line := 0
	for len(data) > 0 {
		var l []byte
		l, data, _ = bytes.Cut(data, []byte{'\n'})
		line++
		t := strings.TrimSpace(string(l))
		switch {
		case t == "" || t == "format:":
		case strings.HasPrefix(t, "name:"):
			f.Name = strings.TrimSpace(t[5:])
		case strings.HasPrefix(t, "ID:"):
			id, err := strconv.Atoi(strings.TrimSpace(t[3:]))
			if err != nil || id < 0 || id > 0xffff {
				return nil, &FormatError{line, fmt.Sprintf("bad ID %q", t[3:])}
			}
			f.ID = id
		case strings.HasPrefix(t, "field:"):
			ff, err := parseFormatField(t)
			if err != nil {
				return nil, &FormatError{line, err.Error()}
			}
			for _, o := range f.Fields {
				if o.Name == ff.Name {
					return nil, &FormatError{line, fmt.Sprintf("duplicate field %q", ff.Name)}
				}
			}
			f.Fields = append(f.Fields, ff)
			f.Size = max(f.Size, ff.Offset+ff.Size)
		case strings.HasPrefix(t, "print fmt:"):
			f.PrintFmt = strings.TrimSpace(t[len("print fmt:"):])
		default:
			return nil, &FormatError{line, fmt.Sprintf("unexpected %q", t)}
		}
	}
	if f.Name == "" {
		return nil, &FormatError{line, "no name: line"}
	}
	if f.ID < 0 {
		return nil, &FormatError{line, "no ID: line"}
	}
	return f, nil
}

// parseFormatField parses "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;".
func parseFormatField(t string) (FormatField, error) {
	var ff FormatField
	parts := strings.Split(t, ";")
	decl := strings.TrimSpace(strings.TrimPrefix(parts[0], "field:"))
	sp := strings.LastIndexAny(decl, " \t")
	if sp < 0 {
		return ff, fmt.Errorf("field %q has no type", decl)
	}
	ff.Type, ff.Name = strings.TrimSpace(decl[:sp]), decl[sp+1:]
	// Arrays are written "char comm[16]": move [16] to the type. For user
	// events Linux 6.12 prints an uninitialised length there ("char
	// b[1893794053]"), so the type is rebuilt from the field size below.
	arrayName := ""
	if i := strings.IndexByte(ff.Name, '['); i > 0 {
		arrayName = ff.Name[i:]
		ff.Name = ff.Name[:i]
	}
	if ff.Name == "" || ff.Type == "" {
		return ff, fmt.Errorf("field %q: empty name or type", decl)
	}
	seen := 0
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, ":")
		if !ok {
			return ff, fmt.Errorf("field %s: bad attribute %q", ff.Name, p)
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > maxRecord {
			return ff, fmt.Errorf("field %s: bad %s %q", ff.Name, k, v)
		}
		switch k {
		case "offset":
			ff.Offset = n
			seen |= 1
		case "size":
			ff.Size = n
			seen |= 2
		case "signed":
			ff.Signed = n != 0
		}
	}
	if seen != 3 {
		return ff, fmt.Errorf("field %s: offset or size missing", ff.Name)
	}
	if arrayName != "" {
		switch {
		case strings.HasPrefix(ff.Type, "__rel_loc ") || strings.HasPrefix(ff.Type, "__data_loc "):
			ff.Type += "[]"
		default:
			elem := basicSizes[ff.Type]
			if elem == 0 {
				elem = 1
			}
			if n, err := strconv.Atoi(strings.Trim(arrayName, "[]")); err == nil && n*elem == ff.Size {
				ff.Type += arrayName
			} else {
				ff.Type += "[" + strconv.Itoa(ff.Size/elem) + "]"
			}
		}
	}
	ff.Common = strings.HasPrefix(ff.Name, "common_")
	ff.Kind, ff.String = classify(ff.Type, ff.Size, ff.Signed)
	if (ff.Kind == KindRelLoc || ff.Kind == KindDataLoc) && ff.Size != 4 {
		return ff, fmt.Errorf("field %s: dynamic field of size %d, want 4", ff.Name, ff.Size)
	}
	return ff, nil
}

func classify(typ string, size int, signed bool) (Kind, bool) {
	text := strings.Contains(typ, "char")
	switch {
	case strings.HasPrefix(typ, "__rel_loc "):
		return KindRelLoc, text
	case strings.HasPrefix(typ, "__data_loc "):
		return KindDataLoc, text
	case strings.Contains(typ, "["):
		return KindArray, text
	case strings.HasPrefix(typ, "struct "):
		return KindStruct, false
	}
	switch size {
	case 1, 2, 4, 8:
		if signed {
			return KindInt, false
		}
		return KindUint, false
	}
	return KindStruct, false
}

// Field returns the field called name.
func (f *Format) Field(name string) (*FormatField, bool) {
	for i := range f.Fields {
		if f.Fields[i].Name == name {
			return &f.Fields[i], true
		}
	}
	return nil, false
}

// Value is one decoded field of a record.
type Value struct {
	Field *FormatField
	Int   int64  // KindInt
	Uint  uint64 // KindUint
	Bytes []byte // arrays, dynamic fields, structs: a sub-slice of the record (NUL trimmed for strings)
}

// Any returns the value as int64, uint64, string or []byte.
func (v Value) Any() any {
	switch v.Field.Kind {
	case KindInt:
		return v.Int
	case KindUint:
		return v.Uint
	}
	if v.Field.String {
		return string(v.Bytes)
	}
	return v.Bytes
}

// RecordError reports a record that does not match its format.
type RecordError struct {
	Event  string
	Field  string
	Offset int
	Msg    string
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("userevents: record of %s, field %s at byte %d: %s", e.Event, e.Field, e.Offset, e.Msg)
}

// Unwrap makes errors.Is(err, ErrPayload) true.
func (e *RecordError) Unwrap() error { return ErrPayload }

// Decode decodes the non-common fields of rec, a record as stored in the
// ring buffer (common fields first), appending to dst. Byte values alias
// rec.
func (f *Format) Decode(rec []byte, dst []Value) ([]Value, error) {
	for i := range f.Fields {
		ff := &f.Fields[i]
		if ff.Common {
			continue
		}
		v, err := f.decodeField(ff, rec)
		if err != nil {
			return dst, err
		}
		dst = append(dst, v)
	}
	return dst, nil
}

func (f *Format) decodeField(ff *FormatField, rec []byte) (Value, error) {
	bad := func(msg string) (Value, error) {
		return Value{}, &RecordError{Event: f.Name, Field: ff.Name, Offset: ff.Offset, Msg: msg}
	}
	if ff.Offset+ff.Size > len(rec) {
		return bad(fmt.Sprintf("record has %d bytes, field ends at %d", len(rec), ff.Offset+ff.Size))
	}
	p := rec[ff.Offset : ff.Offset+ff.Size]
	v := Value{Field: ff}
	switch ff.Kind {
	case KindInt, KindUint:
		var u uint64
		switch ff.Size {
		case 1:
			u = uint64(p[0])
		case 2:
			u = uint64(binary.LittleEndian.Uint16(p))
		case 4:
			u = uint64(binary.LittleEndian.Uint32(p))
		case 8:
			u = binary.LittleEndian.Uint64(p)
		}
		v.Uint = u
		shift := uint(64 - 8*ff.Size)
		v.Int = int64(u<<shift) >> shift
	case KindRelLoc, KindDataLoc:
		loc := binary.LittleEndian.Uint32(p)
		off, size := int(loc&0xffff), int(loc>>16)
		start := off
		if ff.Kind == KindRelLoc {
			start = ff.Offset + 4 + off
		}
		if start+size > len(rec) {
			return bad(fmt.Sprintf("dynamic data [%d,%d) beyond the %d-byte record", start, start+size, len(rec)))
		}
		v.Bytes = rec[start : start+size]
	default:
		v.Bytes = p
	}
	if ff.String {
		if i := bytes.IndexByte(v.Bytes, 0); i >= 0 {
			v.Bytes = v.Bytes[:i]
		}
	}
	return v, nil
}

// Common holds the common fields of a record.
type Common struct {
	Type         uint16
	Flags        uint8
	PreemptCount uint8
	PID          int32
}

// ParseCommon decodes struct trace_entry at the start of a record.
func ParseCommon(rec []byte) (Common, bool) {
	if len(rec) < CommonSize {
		return Common{}, false
	}
	return Common{
		Type:         binary.LittleEndian.Uint16(rec),
		Flags:        rec[2],
		PreemptCount: rec[3],
		PID:          int32(binary.LittleEndian.Uint32(rec[4:])),
	}, true
}

// Matches reports whether the format's non-common fields are those of s
// (same names, types and sizes, in order): how a consumer finds which
// multi-format event NAME.ID carries a schema.
func (f *Format) Matches(s *Schema) bool {
	i := 0
	for _, ff := range f.Fields {
		if ff.Common {
			continue
		}
		if i >= len(s.Fields) {
			return false
		}
		sf := s.Fields[i]
		if sf.Name != ff.Name || sf.Type != ff.Type || sf.Size != ff.Size || sf.Offset+CommonSize != ff.Offset {
			return false
		}
		i++
	}
	return i == len(s.Fields)
}
