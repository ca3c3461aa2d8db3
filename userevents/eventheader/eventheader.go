package eventheader

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Header flags, extension kinds, opcodes and levels (eventheader.h).
const (
	FlagPointer64    = 0x01
	FlagLittleEndian = 0x02
	FlagExtension    = 0x04

	ExtMetadata   = 1
	ExtActivityID = 2
	extChain      = 0x8000

	// CommandTypes are the fields every EventHeader tracepoint declares
	// to the kernel; the event's own fields follow them, undeclared.
	CommandTypes = "u8 eventheader_flags; u8 version; u16 id; u16 tag; u8 opcode; u8 level"
	// HeaderSize is the size of those fields.
	HeaderSize = 8
	// NameMax bounds a tracepoint name ("Provider_LnKn..." and options).
	NameMax = 256
)

// Field encodings (low 5 bits of the encoding byte) and their flags.
const (
	EncStruct uint8 = 1 + iota
	EncValue8
	EncValue16
	EncValue32
	EncValue64
	EncValue128
	EncZStringChar8
	EncZStringChar16
	EncZStringChar32
	EncStringLength16Char8
	EncStringLength16Char16
	EncStringLength16Char32
	EncBinaryLength16Char8
	encMax

	EncCArray = 0x20 // constant-length array: u16 count in the metadata
	EncVArray = 0x40 // variable-length array: u16 count in the payload
	encChain  = 0x80 // a format byte follows
)

// Field formats (low 7 bits of the format byte).
const (
	FmtDefault uint8 = iota
	FmtUnsignedInt
	FmtSignedInt
	FmtHexInt
	FmtErrno
	FmtPID
	FmtTime
	FmtBoolean
	FmtFloat
	FmtHexBytes
	FmtString8
	FmtStringUTF
	FmtStringUTFBOM
	FmtStringXML
	FmtStringJSON
	FmtUUID
	FmtPort
	FmtIPAddress
	FmtIPAddressObsolete

	fmtChain = 0x80 // a u16 field tag follows
)

// Header is the eventheader struct that starts every event.
type Header struct {
	Flags   uint8
	Version uint8
	ID      uint16
	Tag     uint16
	Opcode  uint8
	Level   uint8
}

// Name is a parsed EventHeader tracepoint name:
// Provider_L<level hex>K<keyword hex><options>.
type Name struct {
	Provider string
	Level    uint8
	Keyword  uint64
	Options  string // "Gmygroup", ... (uppercase letter + [0-9a-z]*), sorted
}

// String returns the tracepoint name.
func (n Name) String() string {
	return n.Provider + "_L" + strconv.FormatUint(uint64(n.Level), 16) + "K" + strconv.FormatUint(n.Keyword, 16) + n.Options
}

// ParseName parses a tracepoint name of the EventHeader convention. The
// provider is everything before the last "_L<hex>K<hex>" suffix.
func ParseName(s string) (Name, bool) {
	for i := strings.LastIndex(s, "_L"); i > 0; i = strings.LastIndex(s[:i], "_L") {
		if n, ok := parseSuffix(s[:i], s[i+2:]); ok {
			return n, true
		}
	}
	return Name{}, false
}

func parseSuffix(provider, rest string) (Name, bool) {
	if strings.ContainsAny(provider, " :") || len(provider)+len(rest)+2 >= NameMax {
		return Name{}, false
	}
	hexRun := func(s string) int {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			i++
		}
		return i
	}
	l := hexRun(rest)
	if l == 0 || l > 2 || l >= len(rest) || rest[l] != 'K' {
		return Name{}, false
	}
	level, _ := strconv.ParseUint(rest[:l], 16, 8)
	rest = rest[l+1:]
	k := hexRun(rest)
	if k == 0 || k > 16 {
		return Name{}, false
	}
	kw, _ := strconv.ParseUint(rest[:k], 16, 64)
	opts := rest[k:]
	for i := 0; i < len(opts); i++ {
		c := opts[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z') || i == 0 && !(c >= 'A' && c <= 'Z') {
			return Name{}, false
		}
	}
	return Name{Provider: provider, Level: uint8(level), Keyword: kw, Options: opts}, true
}

// Event is one decoded EventHeader event.
type Event struct {
	Name   Name // from the tracepoint name
	Header Header
	// EventName is the event's name from its metadata (attributes after
	// ';' are in EventAttributes); empty when the event has no metadata.
	EventName       string
	EventAttributes string
	HasMetadata     bool
	// Activity and RelatedActivity are the ActivityId extension's ids
	// (nil when absent).
	Activity, RelatedActivity []byte
	// Fields are the top-level fields, in order.
	Fields []Field
	// Payload is the undecoded payload of an event without metadata.
	Payload []byte
}

// Field is a decoded field: a value, an array of values or structs, or a
// struct.
type Field struct {
	Name       string // up to the first ';'
	Attributes string // after it, without the ';'
	Encoding   uint8  // without flags
	Format     uint8  // without the chain flag
	Tag        uint16
	Array      bool    // EncCArray or EncVArray
	Data       []byte  // a value's bytes (strings without their length or terminator)
	Elems      []Field // array elements (values or structs, named like the array)
	Members    []Field // struct members
	BigEndian  bool
}

// Error is a malformed event at byte Offset of the data given to Decode.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("eventheader: byte %d: %s", e.Offset, e.Msg) }

// maxDepth bounds struct nesting; maxItems the values one event may
// decode to (a corrupt count must not make millions).
const (
	maxDepth = 32
	maxItems = 1 << 16
)

// Decode decodes the event data of tracepoint name: data starts at the
// eventheader (the record after the kernel's common fields). Bytes after
// the last field (padding) are ignored.
func Decode(name string, data []byte) (*Event, error) {
	n, ok := ParseName(name)
	if !ok {
		return nil, &Error{0, fmt.Sprintf("tracepoint %q does not follow the EventHeader naming (Provider_L<level>K<keyword>)", name)}
	}
	if len(data) < HeaderSize {
		return nil, &Error{0, fmt.Sprintf("%d bytes, short of the 8-byte eventheader", len(data))}
	}
	ev := &Event{Name: n}
	h := &ev.Header
	h.Flags, h.Version, h.Opcode, h.Level = data[0], data[1], data[6], data[7]
	var bo binary.ByteOrder = binary.BigEndian
	if h.Flags&FlagLittleEndian != 0 {
		bo = binary.LittleEndian
	}
	h.ID, h.Tag = bo.Uint16(data[2:]), bo.Uint16(data[4:])
	off := HeaderSize
	var meta []byte
	metaAt := 0
	if h.Flags&FlagExtension != 0 {
		for {
			if len(data)-off < 4 {
				return nil, &Error{off, "extension header cut short"}
			}
			size, kind := int(bo.Uint16(data[off:])), bo.Uint16(data[off+2:])
			off += 4
			if size > len(data)-off {
				return nil, &Error{off - 4, fmt.Sprintf("extension of %d bytes, %d left", size, len(data)-off)}
			}
			body := data[off : off+size]
			switch kind &^ extChain {
			case ExtMetadata:
				meta, metaAt = body, off
			case ExtActivityID:
				switch size {
				case 16:
					ev.Activity = body
				case 32:
					ev.Activity, ev.RelatedActivity = body[:16], body[16:]
				default:
					return nil, &Error{off - 4, fmt.Sprintf("activity id extension of %d bytes (16 or 32)", size)}
				}
			}
			off += size
			if kind&extChain == 0 {
				break
			}
		}
	}
	if meta == nil {
		ev.Payload = data[off:]
		return ev, nil
	}
	ev.HasMetadata = true
	d := &decoder{meta: meta, metaAt: metaAt, data: data, off: off, bo: bo, big: bo == binary.BigEndian}
	name0, ok := d.cstr()
	if !ok {
		return nil, &Error{metaAt, "event name not terminated"}
	}
	ev.EventName, ev.EventAttributes, _ = strings.Cut(name0, ";")
	defs, err := d.defs(-1, 0)
	if err != nil {
		return nil, err
	}
	for i := range defs {
		f, err := d.field(&defs[i])
		if err != nil {
			return nil, err
		}
		ev.Fields = append(ev.Fields, f)
	}
	return ev, nil
}

// def is a field definition from the metadata.
type def struct {
	name, attrs string
	enc, fmt    uint8
	flags       uint8 // EncCArray / EncVArray
	tag         uint16
	count       uint16 // constant array length
	members     []def
	at          int // metadata offset, for errors
}

type decoder struct {
	meta   []byte
	metaAt int
	mo     int
	data   []byte
	off    int
	bo     binary.ByteOrder
	big    bool
	items  int
}

func (d *decoder) cstr() (string, bool) {
	for i := d.mo; i < len(d.meta); i++ {
		if d.meta[i] == 0 {
			s := string(d.meta[d.mo:i])
			d.mo = i + 1
			return s, true
		}
	}
	return "", false
}

// defs reads n field definitions (n < 0: to the end of the metadata).
func (d *decoder) defs(n, depth int) ([]def, error) {
	if depth > maxDepth {
		return nil, &Error{d.metaAt + d.mo, "structs nested too deep"}
	}
	var out []def
	for n != 0 && d.mo < len(d.meta) {
		at := d.metaAt + d.mo
		full, ok := d.cstr()
		if !ok || d.mo >= len(d.meta) {
			return nil, &Error{at, "field definition cut short"}
		}
		f := def{at: at}
		f.name, f.attrs, _ = strings.Cut(full, ";")
		e := d.meta[d.mo]
		d.mo++
		f.enc, f.flags = e&0x1f, e&(EncCArray|EncVArray)
		if f.flags == EncCArray|EncVArray {
			return nil, &Error{at, fmt.Sprintf("field %q: both array flags", f.name)}
		}
		if f.enc == 0 || f.enc >= encMax {
			return nil, &Error{at, fmt.Sprintf("field %q: unknown encoding %d", f.name, f.enc)}
		}
		if e&encChain != 0 {
			if d.mo >= len(d.meta) {
				return nil, &Error{at, "format byte cut short"}
			}
			fb := d.meta[d.mo]
			d.mo++
			f.fmt = fb & 0x7f
			if fb&fmtChain != 0 {
				if len(d.meta)-d.mo < 2 {
					return nil, &Error{at, "field tag cut short"}
				}
				f.tag = d.bo.Uint16(d.meta[d.mo:])
				d.mo += 2
			}
		}
		if f.flags == EncCArray {
			if len(d.meta)-d.mo < 2 {
				return nil, &Error{at, "array length cut short"}
			}
			f.count = d.bo.Uint16(d.meta[d.mo:])
			d.mo += 2
			if f.count == 0 {
				return nil, &Error{at, fmt.Sprintf("field %q: constant-length array of 0", f.name)}
			}
		}
		if f.enc == EncStruct {
			if f.fmt == 0 {
				return nil, &Error{at, fmt.Sprintf("struct %q with no fields", f.name)}
			}
			m, err := d.defs(int(f.fmt), depth+1)
			if err != nil {
				return nil, err
			}
			// A struct whose count runs past the metadata ends with it
			// (LinuxTracepoints' decoder reads such events the same way).
			f.members = m
		}
		out = append(out, f)
		n--
	}
	return out, nil
}

func (d *decoder) field(f *def) (Field, error) {
	out := Field{Name: f.name, Attributes: f.attrs, Encoding: f.enc, Format: f.fmt, Tag: f.tag, BigEndian: d.big}
	if f.flags == 0 {
		return d.one(f, out)
	}
	out.Array = true
	n := int(f.count)
	if f.flags == EncVArray {
		if len(d.data)-d.off < 2 {
			return out, &Error{d.off, fmt.Sprintf("array %q: count cut short", f.name)}
		}
		n = int(d.bo.Uint16(d.data[d.off:]))
		d.off += 2
	}
	for i := 0; i < n; i++ {
		e, err := d.one(f, Field{Name: f.name, Encoding: f.enc, Format: f.fmt, Tag: f.tag, BigEndian: d.big})
		if err != nil {
			return out, err
		}
		out.Elems = append(out.Elems, e)
	}
	return out, nil
}

// one decodes one value (or struct) of definition f into out.
func (d *decoder) one(f *def, out Field) (Field, error) {
	d.items++
	if d.items > maxItems {
		return out, &Error{d.off, fmt.Sprintf("more than %d values", maxItems)}
	}
	if f.enc == EncStruct {
		for i := range f.members {
			m, err := d.field(&f.members[i])
			if err != nil {
				return out, err
			}
			out.Members = append(out.Members, m)
		}
		return out, nil
	}
	rest := d.data[d.off:]
	short := func() (Field, error) {
		return out, &Error{d.off, fmt.Sprintf("field %q cut short (%d bytes left)", f.name, len(rest))}
	}
	size, skip := 0, 0
	switch f.enc {
	case EncValue8:
		size = 1
	case EncValue16:
		size = 2
	case EncValue32:
		size = 4
	case EncValue64:
		size = 8
	case EncValue128:
		size = 16
	case EncZStringChar8, EncZStringChar16, EncZStringChar32:
		unit := unitSize(f.enc)
		size = -1
		for i := 0; i+unit <= len(rest); i += unit {
			if allZero(rest[i : i+unit]) {
				size, skip = i, unit
				break
			}
		}
		if size < 0 { // unterminated at the end of the event: take the rest
			size = len(rest) - len(rest)%unit
		}
	case EncStringLength16Char8, EncStringLength16Char16, EncStringLength16Char32, EncBinaryLength16Char8:
		if len(rest) < 2 {
			return short()
		}
		size = int(d.bo.Uint16(rest)) * unitSize(f.enc)
		rest = rest[2:]
		d.off += 2
	}
	if size > len(rest) {
		return short()
	}
	out.Data = rest[:size]
	d.off += size + skip
	return out, nil
}

func unitSize(enc uint8) int {
	switch enc {
	case EncZStringChar16, EncStringLength16Char16:
		return 2
	case EncZStringChar32, EncStringLength16Char32:
		return 4
	}
	return 1
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Value is a field to encode: its name, encoding (without array flags),
// format, optional tag, and its bytes in little-endian order (strings and
// binary without length or terminator; 16- and 32-bit character strings
// as UTF-16 or UTF-32 code units).
//
// Arrays: Array is EncCArray (the count, len(Elems), is in the metadata:
// every event of this name has it) or EncVArray (the count precedes the
// elements in the payload); each element of Elems gives its Data (or, in
// an array of structs, its Members), its own Name, Encoding and Format
// are ignored. Structs: Encoding EncStruct, Members are its fields (1 to
// 127, each any Value, nested structs and arrays included); an array of
// structs takes its field definitions from Members and each element's
// values from that element's Members, in the same order and encodings.
type Value struct {
	Name     string
	Encoding uint8
	Format   uint8
	Data     []byte
	Tag      uint16
	Array    uint8
	Elems    []Value
	Members  []Value
}

// Append appends a little-endian EventHeader event to dst: the header
// (h.Flags is set to pointer64 | little-endian | extension), one metadata
// extension naming the event and its fields, then the field values. It
// checks names (no ';' or NUL), encodings, that each value has the size
// its encoding gives, and that counts and lengths fit their 16 bits.
func Append(dst []byte, h Header, event string, vals []Value) ([]byte, error) {
	if strings.ContainsAny(event, ";\x00") || event == "" {
		return dst, fmt.Errorf("eventheader: bad event name %q", event)
	}
	meta := append([]byte(event), 0)
	var data []byte
	var err error
	for i := range vals {
		if meta, data, err = appendValue(meta, data, &vals[i], 0); err != nil {
			return dst, err
		}
	}
	if len(meta) > 0xffff {
		return dst, fmt.Errorf("eventheader: metadata of %d bytes, more than a 16-bit size", len(meta))
	}
	h.Flags = FlagPointer64 | FlagLittleEndian | FlagExtension
	dst = append(dst, h.Flags, h.Version)
	dst = binary.LittleEndian.AppendUint16(dst, h.ID)
	dst = binary.LittleEndian.AppendUint16(dst, h.Tag)
	dst = append(dst, h.Opcode, h.Level)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(meta)))
	dst = binary.LittleEndian.AppendUint16(dst, ExtMetadata)
	dst = append(dst, meta...)
	return append(dst, data...), nil
}

// appendValue appends v's definition to meta and its value to data.
func appendValue(meta, data []byte, v *Value, depth int) ([]byte, []byte, error) {
	meta, err := appendDef(meta, v, depth)
	if err != nil {
		return meta, data, err
	}
	data, err = appendFieldData(data, v, v, depth)
	return meta, data, err
}

// appendDef appends the metadata of field v (and of its struct's fields).
func appendDef(meta []byte, v *Value, depth int) ([]byte, error) {
	if depth > maxDepth {
		return meta, fmt.Errorf("eventheader: field %q: structs nested deeper than %d", v.Name, maxDepth)
	}
	if strings.ContainsAny(v.Name, ";\x00") || v.Name == "" {
		return meta, fmt.Errorf("eventheader: bad field name %q", v.Name)
	}
	if v.Encoding == 0 || v.Encoding >= encMax {
		return meta, fmt.Errorf("eventheader: field %q: encoding %d unknown", v.Name, v.Encoding)
	}
	if v.Array != 0 && v.Array != EncCArray && v.Array != EncVArray {
		return meta, fmt.Errorf("eventheader: field %q: Array must be 0, EncCArray or EncVArray", v.Name)
	}
	meta = append(meta, v.Name...)
	meta = append(meta, 0)
	format := v.Format
	if v.Encoding == EncStruct {
		if len(v.Members) == 0 || len(v.Members) > 127 {
			return meta, fmt.Errorf("eventheader: struct %q: %d fields (1 to 127)", v.Name, len(v.Members))
		}
		format = uint8(len(v.Members))
	} else if format > 127 {
		return meta, fmt.Errorf("eventheader: field %q: format %d (at most 127)", v.Name, format)
	}
	switch {
	case v.Tag != 0:
		meta = append(meta, v.Encoding|v.Array|encChain, format|fmtChain)
		meta = binary.LittleEndian.AppendUint16(meta, v.Tag)
	case format != 0:
		meta = append(meta, v.Encoding|v.Array|encChain, format)
	default:
		meta = append(meta, v.Encoding|v.Array)
	}
	if v.Array == EncCArray {
		if len(v.Elems) == 0 || len(v.Elems) > 0xffff {
			return meta, fmt.Errorf("eventheader: constant array %q: %d elements (1 to 65535)", v.Name, len(v.Elems))
		}
		meta = binary.LittleEndian.AppendUint16(meta, uint16(len(v.Elems)))
	}
	if v.Encoding == EncStruct {
		for i := range v.Members {
			var err error
			if meta, err = appendDef(meta, &v.Members[i], depth+1); err != nil {
				return meta, err
			}
		}
	}
	return meta, nil
}

// appendFieldData appends the value of field def (an array: its count
// when variable, then its elements) taken from val.
func appendFieldData(data []byte, def, val *Value, depth int) ([]byte, error) {
	if def.Array == 0 {
		return appendData(data, def, val, depth)
	}
	if def.Array == EncCArray && len(val.Elems) != len(def.Elems) {
		return data, fmt.Errorf("eventheader: constant array %q: %d elements, defined with %d", def.Name, len(val.Elems), len(def.Elems))
	}
	if def.Array == EncVArray {
		if len(val.Elems) > 0xffff {
			return data, fmt.Errorf("eventheader: array %q: %d elements, more than a 16-bit count", def.Name, len(val.Elems))
		}
		data = binary.LittleEndian.AppendUint16(data, uint16(len(val.Elems)))
	}
	for i := range val.Elems {
		var err error
		if data, err = appendData(data, def, &val.Elems[i], depth); err != nil {
			return data, fmt.Errorf("eventheader: array %q element %d: %w", def.Name, i, err)
		}
	}
	return data, nil
}

// appendData appends the value val of a field (or array element) defined
// by def: def gives the encoding and, for structs, the fields; val the
// bytes or, for structs, the members' values.
func appendData(data []byte, def, val *Value, depth int) ([]byte, error) {
	name := def.Name
	if depth > maxDepth {
		return data, fmt.Errorf("eventheader: field %q: structs nested deeper than %d", name, maxDepth)
	}
	switch def.Encoding {
	case EncStruct:
		if len(val.Members) != len(def.Members) {
			return data, fmt.Errorf("eventheader: struct %q: %d values for %d fields", name, len(val.Members), len(def.Members))
		}
		for i := range def.Members {
			m, mv := &def.Members[i], &val.Members[i]
			if mv.Encoding != 0 && mv.Encoding != m.Encoding {
				return data, fmt.Errorf("eventheader: struct %q field %q: encoding %d, defined as %d", name, m.Name, mv.Encoding, m.Encoding)
			}
			var err error
			if data, err = appendFieldData(data, m, mv, depth+1); err != nil {
				return data, err
			}
		}
		return data, nil
	case EncValue8, EncValue16, EncValue32, EncValue64, EncValue128:
		want := map[uint8]int{EncValue8: 1, EncValue16: 2, EncValue32: 4, EncValue64: 8, EncValue128: 16}[def.Encoding]
		if len(val.Data) != want {
			return data, fmt.Errorf("eventheader: field %q: %d bytes for a %d-byte value", name, len(val.Data), want)
		}
		return append(data, val.Data...), nil
	case EncZStringChar8, EncZStringChar16, EncZStringChar32:
		unit := unitSize(def.Encoding)
		if len(val.Data)%unit != 0 {
			return data, fmt.Errorf("eventheader: field %q: %d bytes, not a whole number of %d-byte characters", name, len(val.Data), unit)
		}
		for i := 0; i < len(val.Data); i += unit {
			if allZero(val.Data[i : i+unit]) {
				return data, fmt.Errorf("eventheader: field %q: NUL inside a zero-terminated string", name)
			}
		}
		data = append(data, val.Data...)
		return append(data, make([]byte, unit)...), nil
	case EncStringLength16Char8, EncStringLength16Char16, EncStringLength16Char32, EncBinaryLength16Char8:
		unit := unitSize(def.Encoding)
		if len(val.Data)%unit != 0 {
			return data, fmt.Errorf("eventheader: field %q: %d bytes, not a whole number of %d-byte characters", name, len(val.Data), unit)
		}
		if n := len(val.Data) / unit; n > 0xffff {
			return data, fmt.Errorf("eventheader: field %q: %d characters, more than a 16-bit length", name, n)
		}
		data = binary.LittleEndian.AppendUint16(data, uint16(len(val.Data)/unit))
		return append(data, val.Data...), nil
	}
	return data, fmt.Errorf("eventheader: field %q: encoding %d not supported by Append", name, def.Encoding)
}
