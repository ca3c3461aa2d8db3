package userevents

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// StructLayout maps a Go struct onto an event's payload. Build one with
// LayoutOf; its Schema is the event and Append encodes a *T without
// reflection or allocation.
type StructLayout[T any] struct {
	Schema *Schema
	ops    []structOp
	dense  bool // every payload byte is written by an op: no clearing needed
	// runs copies a struct without dynamic fields, whose payload fits
	// smallPayload, byte ranges at a time (Typed.Write's fast path).
	runs []fixedRun
}

// fixedRun copies size bytes of the Go struct at goOff to the payload at
// off. Integers keep their size (compatible checks it) and the payload is
// little-endian like the machines Go runs user_events on (amd64, arm64,
// riscv64, ppc64le, loong64).
type fixedRun struct {
	goOff, off, size uint32
}

type structOp struct {
	goOff  uintptr
	goKind reflect.Kind
	field  int // index in Schema.Fields
}

// LayoutOf derives an event from the exported fields of struct T, in
// order. Field names come from the tag `userevents:"name"` or the Go name;
// `userevents:"-"` skips a field; `userevents:"name,TYPE"` sets the kernel
// type (e.g. "__data_loc char[]", "int"). Default types: int8…int64 →
// s8…s64, uint8…uint64 → u8…u64, int/uint → s64/u64, bool → u8,
// [N]byte → char[N], string → __rel_loc char[], []byte → __rel_loc u8[].
func LayoutOf[T any](name string) (*StructLayout[T], error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("userevents: %w: %v is not a struct", ErrInvalidCommand, t)
	}
	var fields []string
	var ops []structOp
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("userevents")
		if tag == "-" {
			continue
		}
		fname, ftype, _ := strings.Cut(tag, ",")
		if fname == "" {
			fname = sf.Name
		}
		def, err := goType(sf.Type)
		if err != nil {
			return nil, fmt.Errorf("userevents: %w: field %s: %v", ErrInvalidCommand, sf.Name, err)
		}
		if ftype == "" {
			ftype = def
		}
		fields = append(fields, ftype+" "+fname)
		ops = append(ops, structOp{goOff: sf.Offset, goKind: sf.Type.Kind(), field: len(ops)})
	}
	s, err := NewSchema(name, fields...)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		f := s.Fields[op.field]
		if err := compatible(f, t.Field(0).Type, op.goKind); err != nil {
			return nil, fmt.Errorf("userevents: %w: field %s: %v", ErrInvalidCommand, f.Name, err)
		}
	}
	// Arrays must match their char[N] exactly.
	for i, op := range ops {
		if op.goKind == reflect.Array {
			gf := structFieldAt(t, op.goOff)
			if gf.Len() != s.Fields[i].Size {
				return nil, fmt.Errorf("userevents: %w: field %s: [%d]byte for %s", ErrInvalidCommand, s.Fields[i].Name, gf.Len(), s.Fields[i].Type)
			}
		}
	}
	l := &StructLayout[T]{Schema: s, ops: ops, dense: !s.HasDynamic()}
	if l.dense && s.FixedSize <= smallPayload && littleEndian() {
		for _, op := range ops {
			f := s.Fields[op.field]
			r := fixedRun{goOff: uint32(op.goOff), off: uint32(f.Offset), size: uint32(f.Size)}
			if n := len(l.runs); n > 0 {
				if p := &l.runs[n-1]; p.goOff+p.size == r.goOff && p.off+p.size == r.off {
					p.size += r.size // adjacent in both: one copy
					continue
				}
			}
			l.runs = append(l.runs, r)
		}
	}
	return l, nil
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

func structFieldAt(t reflect.Type, off uintptr) reflect.Type {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Offset == off {
			return t.Field(i).Type
		}
	}
	return nil
}

func goType(t reflect.Type) (string, error) {
	switch t.Kind() {
	case reflect.Int8:
		return "s8", nil
	case reflect.Int16:
		return "s16", nil
	case reflect.Int32:
		return "s32", nil
	case reflect.Int64, reflect.Int:
		return "s64", nil
	case reflect.Uint8, reflect.Bool:
		return "u8", nil
	case reflect.Uint16:
		return "u16", nil
	case reflect.Uint32:
		return "u32", nil
	case reflect.Uint64, reflect.Uint, reflect.Uintptr:
		return "u64", nil
	case reflect.String:
		return "__rel_loc char[]", nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "__rel_loc u8[]", nil
		}
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return fmt.Sprintf("char[%d]", t.Len()), nil
		}
	}
	return "", fmt.Errorf("the Go type %v has no user_events type", t)
}

func goSize(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8, reflect.Bool:
		return 1
	case reflect.Int16, reflect.Uint16:
		return 2
	case reflect.Int32, reflect.Uint32:
		return 4
	case reflect.Int64, reflect.Uint64, reflect.Int, reflect.Uint, reflect.Uintptr:
		return 8
	}
	return 0
}

func compatible(f Field, _ reflect.Type, k reflect.Kind) error {
	switch f.Kind {
	case KindInt, KindUint:
		if n := goSize(k); n != f.Size {
			return fmt.Errorf("the Go kind %v does not match %s (%d bytes)", k, f.Type, f.Size)
		}
	case KindRelLoc, KindDataLoc:
		if k != reflect.String && k != reflect.Slice {
			return fmt.Errorf("the Go kind %v does not match %s", k, f.Type)
		}
	case KindArray:
		if k != reflect.Array {
			return fmt.Errorf("the Go kind %v does not match %s", k, f.Type)
		}
	default:
		return fmt.Errorf("%s is not supported in struct layouts", f.Type)
	}
	return nil
}

// Append encodes *v and appends the payload to dst. It does not
// allocate when dst has room.
func (l *StructLayout[T]) Append(dst []byte, v *T) ([]byte, error) {
	s := l.Schema
	base := len(dst)
	dst = grow(dst, s.FixedSize)
	if !l.dense {
		clear(dst[base:])
	}
	p := unsafe.Pointer(v)
	for _, op := range l.ops {
		f := &s.Fields[op.field]
		at := unsafe.Add(p, op.goOff)
		out := dst[base+f.Offset:]
		switch f.Kind {
		case KindInt, KindUint:
			var x uint64
			switch op.goKind {
			case reflect.Int8, reflect.Uint8, reflect.Bool:
				x = uint64(*(*uint8)(at))
			case reflect.Int16, reflect.Uint16:
				x = uint64(*(*uint16)(at))
			case reflect.Int32, reflect.Uint32:
				x = uint64(*(*uint32)(at))
			default:
				x = *(*uint64)(at)
			}
			putUint(out[:f.Size], x)
		case KindArray:
			copy(out[:f.Size], unsafe.Slice((*byte)(at), f.Size))
		case KindRelLoc, KindDataLoc:
			var data []byte
			if op.goKind == reflect.String {
				str := *(*string)(at)
				data = unsafe.Slice(unsafe.StringData(str), len(str))
			} else {
				data = *(*[]byte)(at)
			}
			if f.String && indexNUL(data) >= 0 {
				return dst[:base], s.payloadErr(f, f.Offset, "string contains a NUL byte")
			}
			start := len(dst) - base
			if start+len(data)+1 > MaxPayload {
				return dst[:base], s.payloadErr(f, f.Offset, "payload too big")
			}
			dst = append(dst, data...)
			if f.String {
				dst = append(dst, 0)
			}
			size := len(dst) - base - start
			off := start - (f.Offset + 4)
			if f.Kind == KindDataLoc {
				off = start + CommonSize
			}
			binary.LittleEndian.PutUint32(dst[base+f.Offset:], uint32(size)<<16|uint32(off))
		}
	}
	return dst, nil
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
