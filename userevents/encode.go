package userevents

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// PayloadError reports a value or payload that does not match the schema.
type PayloadError struct {
	Event  string
	Field  string // empty for whole-payload problems
	Offset int    // byte offset in the payload, -1 if none
	Msg    string
}

func (e *PayloadError) Error() string {
	s := "userevents: " + e.Event
	if e.Field != "" {
		s += " field " + e.Field
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(" (payload byte %d)", e.Offset)
	}
	return s + ": " + e.Msg
}

// Unwrap makes errors.Is(err, ErrPayload) true.
func (e *PayloadError) Unwrap() error { return ErrPayload }

func (s *Schema) payloadErr(f *Field, off int, msg string) error {
	name := ""
	if f != nil {
		name = f.Name
	}
	return &PayloadError{Event: s.Name, Field: name, Offset: off, Msg: msg}
}

// AppendPayload encodes one value per field, in field order, and appends
// the payload (without write_index) to dst. Integers may be any Go integer
// type that fits the field; char[N] takes a string (shorter than N, so
// that it stays NUL-terminated) or []byte (at most N); dynamic fields take
// a string (no NUL inside; the NUL is added) or []byte; struct fields take
// a []byte of exactly their size. It does not allocate when dst has room
// and the values are valid.
func (s *Schema) AppendPayload(dst []byte, args ...any) ([]byte, error) {
	if len(args) != len(s.Fields) {
		return dst, s.payloadErr(nil, -1, fmt.Sprintf("%d values for %d fields", len(args), len(s.Fields)))
	}
	base := len(dst)
	dst = grow(dst, s.FixedSize)
	fixed := dst[base : base+s.FixedSize]
	clear(fixed)
	for i := range s.Fields {
		f := &s.Fields[i]
		var err error
		dst, err = s.put(dst, base, f, args[i])
		if err != nil {
			return dst[:base], err
		}
	}
	if len(dst)-base > MaxPayload {
		return dst[:base], s.payloadErr(nil, -1, fmt.Sprintf("payload is %d bytes, more than the %d a recorded event can carry", len(dst)-base, MaxPayload))
	}
	return dst, nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*cap(b)+n)
	copy(nb, b)
	return nb
}

// put encodes v into field f of the payload starting at dst[base:].
func (s *Schema) put(dst []byte, base int, f *Field, v any) ([]byte, error) {
	p := dst[base+f.Offset : base+f.Offset+f.Size]
	switch f.Kind {
	case KindInt, KindUint:
		x, neg, ok := toInt(v)
		if !ok {
			return dst, s.payloadErr(f, f.Offset, "want an integer for "+f.Type+", got "+typeName(v))
		}
		if !fits(x, neg, f.Size, f.Kind == KindInt) {
			return dst, s.payloadErr(f, f.Offset, "value out of range for "+f.Type)
		}
		putUint(p, x)
	case KindArray:
		switch b := v.(type) {
		case string:
			if len(b) >= f.Size {
				return dst, s.payloadErr(f, f.Offset, fmt.Sprintf("string of %d bytes does not fit %s with its NUL", len(b), f.Type))
			}
			if strings.IndexByte(b, 0) >= 0 {
				return dst, s.payloadErr(f, f.Offset, "string contains a NUL byte")
			}
			copy(p, b)
		case []byte:
			if len(b) > f.Size {
				return dst, s.payloadErr(f, f.Offset, fmt.Sprintf("%d bytes do not fit %s", len(b), f.Type))
			}
			copy(p, b)
		default:
			return dst, s.payloadErr(f, f.Offset, "want a string or []byte for "+f.Type+", got "+typeName(v))
		}
	case KindStruct:
		b, ok := v.([]byte)
		if !ok || len(b) != f.Size {
			return dst, s.payloadErr(f, f.Offset, fmt.Sprintf("want a []byte of exactly %d bytes for %s", f.Size, f.Type))
		}
		copy(p, b)
	case KindRelLoc, KindDataLoc:
		start := len(dst) - base
		switch b := v.(type) {
		case string:
			if f.String && strings.IndexByte(b, 0) >= 0 {
				return dst, s.payloadErr(f, f.Offset, "string contains a NUL byte")
			}
			if len(b)+1 > MaxPayload {
				return dst, s.payloadErr(f, f.Offset, fmt.Sprintf("string of %d bytes is too long", len(b)))
			}
			dst = append(dst, b...)
			if f.String {
				dst = append(dst, 0)
			}
		case []byte:
			if len(b) > MaxPayload {
				return dst, s.payloadErr(f, f.Offset, fmt.Sprintf("%d bytes are too long", len(b)))
			}
			dst = append(dst, b...)
			if f.String && (len(b) == 0 || b[len(b)-1] != 0) {
				dst = append(dst, 0)
			}
		default:
			return dst, s.payloadErr(f, f.Offset, "want a string or []byte for "+f.Type+", got "+typeName(v))
		}
		size := len(dst) - base - start
		off := start - (f.Offset + 4)
		if f.Kind == KindDataLoc {
			off = start + CommonSize
		}
		if size > 0xffff || off > 0xffff {
			return dst, s.payloadErr(f, f.Offset, "dynamic data too long")
		}
		binary.LittleEndian.PutUint32(dst[base+f.Offset:], uint32(size)<<16|uint32(off))
	}
	return dst, nil
}

func putUint(p []byte, x uint64) {
	switch len(p) {
	case 1:
		p[0] = byte(x)
	case 2:
		binary.LittleEndian.PutUint16(p, uint16(x))
	case 4:
		binary.LittleEndian.PutUint32(p, uint32(x))
	case 8:
		binary.LittleEndian.PutUint64(p, x)
	}
}

// toInt returns v as a two's complement 64-bit pattern and whether it is
// negative.
func toInt(v any) (x uint64, neg, ok bool) {
	switch n := v.(type) {
	case int:
		return uint64(n), n < 0, true
	case int8:
		return uint64(n), n < 0, true
	case int16:
		return uint64(n), n < 0, true
	case int32:
		return uint64(n), n < 0, true
	case int64:
		return uint64(n), n < 0, true
	case uint:
		return uint64(n), false, true
	case uint8:
		return uint64(n), false, true
	case uint16:
		return uint64(n), false, true
	case uint32:
		return uint64(n), false, true
	case uint64:
		return n, false, true
	case uintptr:
		return uint64(n), false, true
	case bool:
		if n {
			return 1, false, true
		}
		return 0, false, true
	}
	return 0, false, false
}

// fits reports whether the integer (x, neg) fits size bytes.
func fits(x uint64, neg bool, size int, signed bool) bool {
	bits := uint(size * 8)
	if neg {
		if !signed {
			return false
		}
		if bits == 64 {
			return true
		}
		return int64(x) >= -(int64(1) << (bits - 1))
	}
	if signed {
		if bits == 64 {
			return x <= math.MaxInt64
		}
		return x < uint64(1)<<(bits-1)
	}
	if bits == 64 {
		return true
	}
	return x < uint64(1)<<bits
}

// typeName names the dynamic type of v without letting v escape.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case []byte:
		return "[]byte"
	case float32, float64:
		return "float"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return "integer"
	case bool:
		return "bool"
	}
	return "another type"
}

// ValidatePayload checks a payload built by hand (WriteRaw) the way the
// kernel will: long enough for the fields, not bigger than MaxPayload,
// dynamic fields inside the payload and strings NUL-terminated. A payload
// that passes never makes the kernel fail the write with EFAULT.
func (s *Schema) ValidatePayload(p []byte) error {
	if len(p) < s.FixedSize {
		return s.payloadErr(nil, len(p), fmt.Sprintf("payload is %d bytes, the fields need %d", len(p), s.FixedSize))
	}
	if len(p) > MaxPayload {
		return s.payloadErr(nil, MaxPayload, fmt.Sprintf("payload is %d bytes, more than the %d a recorded event can carry", len(p), MaxPayload))
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Kind != KindRelLoc && f.Kind != KindDataLoc {
			continue
		}
		loc := binary.LittleEndian.Uint32(p[f.Offset:])
		off, size := int(loc&0xffff), int(loc>>16)
		start := f.Offset + 4 + off
		if f.Kind == KindDataLoc {
			start = off - CommonSize
		}
		if start < 0 || start+size > len(p) {
			return s.payloadErr(f, f.Offset, fmt.Sprintf("dynamic data [%d,%d) outside the %d-byte payload", start, start+size, len(p)))
		}
		if f.String && (size == 0 || p[start+size-1] != 0) {
			return s.payloadErr(f, start, "string is not NUL-terminated")
		}
	}
	return nil
}
