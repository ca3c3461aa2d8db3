package userevents

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits the kernel enforces (kernel/trace/trace_events_user.c, Linux 6.12).
const (
	// MaxCommand is the longest register command, without its NUL: the
	// kernel copies at most 512 bytes including the terminator.
	MaxCommand = 511
	// MaxArray is the largest N of a char[N] field.
	MaxArray = 1024
	// MaxPayload is the largest payload (after write_index) an event can
	// carry into a default ftrace ring buffer: a 4096-byte sub-buffer holds
	// 4080 bytes of events, an event of more than 112 bytes has an 8-byte
	// header, and the common fields take 8. Bigger writes are dropped by
	// the kernel without an error, so Write refuses them.
	MaxPayload = 4080 - 8 - CommonSize
	// CommonSize is the size of the common_* fields (struct trace_entry)
	// the kernel puts before the payload of every recorded event.
	CommonSize = 8
	// System is the tracefs event system of single-format user events.
	System = "user_events"
	// MultiSystem is the system of multi-format user events (Linux 6.10),
	// named NAME.ID there.
	MultiSystem = "user_events_multi"
)

// Kind tells how a field's value is encoded.
type Kind uint8

// Field kinds.
const (
	KindInt     Kind = iota + 1 // s8…s64, int, short, char: little-endian two's complement
	KindUint                    // u8…u64, unsigned int/short/char
	KindArray                   // char[N], unsigned char[N]: N bytes, strings NUL-padded
	KindRelLoc                  // __rel_loc T[]: u32 (len<<16 | offset from the end of the u32)
	KindDataLoc                 // __data_loc T[]: u32 (len<<16 | offset from the start of the record)
	KindStruct                  // struct X name SIZE: SIZE opaque bytes
)

func (k Kind) String() string {
	switch k {
	case KindInt:
		return "int"
	case KindUint:
		return "uint"
	case KindArray:
		return "array"
	case KindRelLoc:
		return "rel_loc"
	case KindDataLoc:
		return "data_loc"
	case KindStruct:
		return "struct"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Field is one field of an event.
type Field struct {
	Type   string // as the kernel spells it: "u32", "char[16]", "__rel_loc char[]", "struct point"
	Name   string
	Kind   Kind
	Size   int  // bytes in the fixed part of the payload (4 for dynamic fields)
	Offset int  // offset in the payload (after write_index, before common fields are added)
	String bool // dynamic or array field holding a NUL-terminated string (its type has "char")
}

// Schema is an event: its name and fields in payload order.
type Schema struct {
	Name   string
	Fields []Field
	// FixedSize is the size of the fixed part of the payload (the sum of
	// the field sizes); dynamic data follows it.
	FixedSize int
}

// Command returns the register command: "name type field; type field".
func (s *Schema) Command() string {
	var b strings.Builder
	b.WriteString(s.Name)
	for i, f := range s.Fields {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Type)
		b.WriteByte(' ')
		b.WriteString(f.Name)
		if f.Kind == KindStruct {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(f.Size))
		}
	}
	return b.String()
}

// Field returns the field called name.
func (s *Schema) Field(name string) (*Field, bool) {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return &s.Fields[i], true
		}
	}
	return nil, false
}

// HasDynamic reports whether the event has __rel_loc/__data_loc fields.
func (s *Schema) HasDynamic() bool {
	for _, f := range s.Fields {
		if f.Kind == KindRelLoc || f.Kind == KindDataLoc {
			return true
		}
	}
	return false
}

// CommandError reports a register command (or schema) the kernel would
// refuse, with the byte offset of the problem in the command.
type CommandError struct {
	Command string
	Offset  int
	Msg     string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("userevents: bad command at byte %d: %s", e.Offset, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalidCommand) true.
func (e *CommandError) Unwrap() error { return ErrInvalidCommand }

// ValidName checks an event or field name: an ASCII letter or underscore,
// then letters, digits or underscores, at most 255 bytes. The kernel is
// more lenient, but anything else breaks tracefs paths, filters or tools.
func ValidName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

var basicSizes = map[string]int{
	"s64": 8, "u64": 8, "s32": 4, "u32": 4, "int": 4, "unsigned int": 4,
	"s16": 2, "u16": 2, "short": 2, "unsigned short": 2,
	"s8": 1, "u8": 1, "char": 1, "unsigned char": 1,
}

// ParseCommand parses a register command "name[ type field[; type field…]]"
// with the kernel's grammar and this package's stricter checks (names,
// no long, no flags after the name, length, payload size).
func ParseCommand(cmd string) (*Schema, error) {
	bad := func(off int, format string, args ...any) error {
		return &CommandError{Command: cmd, Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	if len(cmd) > MaxCommand {
		return nil, bad(MaxCommand, "command is %d bytes, the kernel takes at most %d", len(cmd), MaxCommand)
	}
	for i := 0; i < len(cmd); i++ {
		if c := cmd[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			return nil, bad(i, "byte 0x%02x is not printable ASCII", c)
		}
	}
	name, args, _ := strings.Cut(cmd, " ")
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return nil, bad(i, "flags after the event name (%q) are not supported by the kernel", name[i:])
	}
	if !ValidName(name) {
		return nil, bad(0, "event name %q: use letters, digits and '_' (not starting with a digit)", name)
	}
	s := &Schema{Name: name}
	if strings.TrimSpace(args) == "" {
		return s, nil
	}
	off := len(name) + 1
	for _, part := range strings.Split(args, ";") {
		start := off
		off += len(part) + 1
		lead := len(part) - len(strings.TrimLeft(part, " \t"))
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f, err := parseField(part)
		if err != nil {
			return nil, bad(start+lead, "field %q: %v", part, err)
		}
		if _, dup := s.Field(f.Name); dup {
			return nil, bad(start+lead, "field %q: duplicate field name %q", part, f.Name)
		}
		f.Offset = s.FixedSize
		s.FixedSize += f.Size
		s.Fields = append(s.Fields, f)
	}
	if s.FixedSize > MaxPayload {
		return nil, bad(len(name)+1, "fields take %d bytes, more than the %d a recorded event can carry", s.FixedSize, MaxPayload)
	}
	return s, nil
}

// parseField parses "type name [size]".
func parseField(text string) (Field, error) {
	words := strings.Fields(text)
	var typ string
	i := 0
	// Types the kernel reads as two (or three) words.
	for _, p := range []string{"__data_loc unsigned", "__rel_loc unsigned", "__data_loc", "__rel_loc", "unsigned", "struct"} {
		pw := strings.Fields(p)
		if len(words) > len(pw) && strings.Join(words[:len(pw)], " ") == p {
			typ = p + " " + words[len(pw)]
			i = len(pw) + 1
			break
		}
	}
	if typ == "" {
		if len(words) == 0 {
			return Field{}, fmt.Errorf("empty field")
		}
		typ = words[0]
		i = 1
	}
	if i >= len(words) {
		return Field{}, fmt.Errorf("missing field name after type %q", typ)
	}
	f := Field{Type: typ, Name: words[i]}
	i++
	if !ValidName(f.Name) {
		return Field{}, fmt.Errorf("field name %q: use letters, digits and '_'", f.Name)
	}
	for _, w := range strings.Fields(typ) {
		if w == "long" || strings.HasPrefix(w, "long[") {
			return Field{}, fmt.Errorf("type %q: long has no fixed size; use s64/u64 or s32/u32", typ)
		}
	}
	if strings.HasPrefix(typ, "struct ") {
		if !ValidName(strings.TrimPrefix(typ, "struct ")) {
			return Field{}, fmt.Errorf("struct type name %q: use letters, digits and '_'", typ)
		}
		if i >= len(words) {
			return Field{}, fmt.Errorf("struct field needs its size in bytes: %q SIZE", typ+" "+f.Name)
		}
		n, err := strconv.ParseUint(words[i], 10, 32)
		if err != nil || n == 0 || n > MaxPayload {
			return Field{}, fmt.Errorf("struct size %q: want 1..%d", words[i], MaxPayload)
		}
		i++
		f.Kind, f.Size = KindStruct, int(n)
	} else if err := typeInfo(&f); err != nil {
		return Field{}, err
	}
	if i != len(words) {
		return Field{}, fmt.Errorf("unexpected %q after the field name (a size is only allowed for struct types)", strings.Join(words[i:], " "))
	}
	return f, nil
}

func typeInfo(f *Field) error {
	typ := f.Type
	if n, ok := basicSizes[typ]; ok {
		f.Size = n
		f.Kind = KindInt
		if typ[0] == 'u' {
			f.Kind = KindUint
		}
		return nil
	}
	for _, p := range []string{"__rel_loc ", "__data_loc "} {
		if !strings.HasPrefix(typ, p) {
			continue
		}
		elem := strings.TrimPrefix(typ, p)
		base, ok := strings.CutSuffix(elem, "[]")
		if !ok {
			return fmt.Errorf("type %q: a dynamic field is an array, e.g. %schar[]", typ, p)
		}
		if _, ok := basicSizes[base]; !ok {
			return fmt.Errorf("type %q: unknown element type %q", typ, base)
		}
		f.Size = 4
		f.Kind = KindRelLoc
		if p == "__data_loc " {
			f.Kind = KindDataLoc
		}
		f.String = strings.Contains(base, "char")
		return nil
	}
	base, rest, ok := strings.Cut(typ, "[")
	if ok && (base == "char" || base == "unsigned char") {
		num, ok := strings.CutSuffix(rest, "]")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 1 || n > MaxArray || num != strconv.Itoa(n) {
			return fmt.Errorf("type %q: want %s[N] with N in 1..%d", typ, base, MaxArray)
		}
		f.Size = n
		f.Kind = KindArray
		f.String = true
		return nil
	}
	return fmt.Errorf("unknown type %q (want u8/s8/u16/s16/u32/s32/u64/s64, int, short, char, char[N], __rel_loc char[], struct NAME SIZE)", typ)
}

// NewSchema builds a schema from a name and fields given as
// "type name" pairs, e.g. NewSchema("req", "u32 id", "__rel_loc char[] path").
func NewSchema(name string, fields ...string) (*Schema, error) {
	cmd := name
	if len(fields) > 0 {
		cmd += " " + strings.Join(fields, "; ")
	}
	return ParseCommand(cmd)
}
