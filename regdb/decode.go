package regdb

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Field is one decoded part of a value.
type Field struct {
	Name  string  // bitfield name; "" for a whole-register enum value; "unk" for unknown set bits
	Low   uint    // lowest bit
	High  uint    // highest bit
	Value uint64  // the field's value (shifted left by the field's Shr)
	Enum  string  // the enum value's name, if any
	Kind  Kind    // how Value is interpreted
	Sub   []Field // nested bitset, for KindBitset fields
}

// String formats f as in Decode's compact form: "SLU", "SPEED=1000",
// "PHYADD=0x1", "unk=0x400".
func (f Field) String() string { return string(f.appendTo(nil)) }

func (f Field) appendTo(dst []byte) []byte {
	switch {
	case f.Name == "" && f.Enum == "":
		return appendScalar(dst, f.Kind, f.Value, f.High-f.Low+1)
	case f.Name == "":
		return append(dst, f.Enum...)
	case f.Kind == KindBool && f.Enum == "":
		return append(dst, f.Name...)
	}
	dst = append(dst, f.Name...)
	dst = append(dst, '=')
	if f.Enum != "" {
		return append(dst, f.Enum...)
	}
	if f.Kind == KindBitset {
		return appendFields(dst, f.Sub)
	}
	return appendScalar(dst, f.Kind, f.Value, f.High-f.Low+1)
}

func appendFields(dst []byte, fs []Field) []byte {
	dst = append(dst, '{')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = f.appendTo(dst)
	}
	return append(dst, '}')
}

func appendScalar(dst []byte, k Kind, v uint64, width uint) []byte {
	switch k {
	case KindUint:
		return strconv.AppendUint(dst, v, 10)
	case KindInt:
		if width > 0 && width < 64 && v&(1<<(width-1)) != 0 {
			v |= ^uint64(0) << width
		}
		return strconv.AppendInt(dst, int64(v), 10)
	case KindFloat:
		switch width {
		case 32:
			return strconv.AppendFloat(dst, float64(math.Float32frombits(uint32(v))), 'g', -1, 32)
		case 64:
			return strconv.AppendFloat(dst, math.Float64frombits(v), 'g', -1, 64)
		}
	case KindBool:
		if v != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	}
	dst = append(dst, "0x"...)
	return strconv.AppendUint(dst, v, 16)
}

// Decode splits value, the register's full value, into its fields. Flags
// that are clear and numeric fields that are zero without an enum name are
// left out; set bits no field covers are reported as a Field named "unk".
// A register of enum type gives one Field with an empty Name.
func (m Match) Decode(value uint64) []Field {
	value, mask := m.shifted(value)
	return m.db.decodeType(nil, m.Register.Type, value, m.Register.Width, m.Register.Shr, mask)
}

// Decode decodes a value of register r with no variant selection.
func (r *Register) Decode(value uint64) []Field {
	var db DB
	return db.decodeType(nil, r.Type, value, r.Width, r.Shr, fieldMask(r.Width))
}

// shifted places an access value at its position in the register and
// returns the mask of the bits the access covered.
func (m Match) shifted(v uint64) (uint64, uint64) {
	unit := m.Domain.Width
	if unit == 0 {
		unit = 8
	}
	w := m.Width
	if w == 0 || w > m.Register.Width {
		w = m.Register.Width
	}
	sh := m.Delta * uint64(unit)
	if sh >= 64 {
		return 0, 0
	}
	mask := fieldMask(w) << sh & fieldMask(m.Register.Width)
	return v << sh & mask, mask
}

func (db *DB) decodeType(dst []Field, t Type, v uint64, width, shr uint, mask uint64) []Field {
	switch t.Kind {
	case KindEnum:
		if name, ok := db.enumName(t.Enum, v<<shr); ok {
			return append(dst, Field{Low: 0, High: width - 1, Value: v << shr, Enum: name, Kind: KindEnum})
		}
		return dst
	case KindBitset:
		return db.decodeBitset(dst, t.Bitset, v, width, mask, 0)
	case KindUint, KindInt, KindFloat:
		return append(dst, Field{Low: 0, High: width - 1, Value: v << shr, Kind: t.Kind})
	}
	return dst
}

func (db *DB) enumName(e *Enum, v uint64) (string, bool) {
	if e == nil {
		return "", false
	}
	for _, val := range e.Values {
		if val.HasValue && val.Value == v && db.included(val.Variants) {
			return val.Name, true
		}
	}
	return "", false
}

// maxDecodeDepth bounds nested bitsets (a bitset may refer to itself).
const maxDecodeDepth = 8

func (db *DB) decodeBitset(dst []Field, bs *Bitset, v uint64, width uint, mask uint64, depth int) []Field {
	if bs == nil || depth > maxDecodeDepth {
		return dst
	}
	var covered uint64
	for _, f := range bs.Fields {
		fm := f.Mask()
		if fm&mask == 0 || !db.included(f.Variants) {
			continue
		}
		covered |= fm
		fv := (v & fm) >> f.Low << f.Shr
		fw := f.High - f.Low + 1
		out := Field{Name: f.Name, Low: f.Low, High: f.High, Value: fv, Kind: f.Type.Kind}
		switch f.Type.Kind {
		case KindEnum:
			name, ok := db.enumName(f.Type.Enum, fv)
			if !ok && fv == 0 {
				continue
			}
			out.Enum = name
		case KindBitset:
			if fv == 0 {
				continue
			}
			out.Sub = db.decodeBitset(nil, f.Type.Bitset, fv>>f.Shr, fw, fieldMask(fw), depth+1)
		case KindBool:
			if fv == 0 {
				continue
			}
			if fw > 1 {
				out.Kind = KindHex
			}
		default:
			if fv == 0 {
				continue
			}
		}
		dst = append(dst, out)
	}
	if unk := v &^ covered & mask; unk != 0 {
		dst = append(dst, Field{Name: "unk", Low: uint(bits.TrailingZeros64(unk)), High: uint(63 - bits.LeadingZeros64(unk)), Value: unk, Kind: KindHex})
	}
	return dst
}

// AppendDecoded appends the compact decoding of value, as in
// "{SLU, ASDE, SPEED=1000}" for bitsets or "(NAME)" for enums, without
// allocating for flat bitsets. Nothing is appended for plain registers.
func (m Match) AppendDecoded(dst []byte, value uint64) []byte {
	value, mask := m.shifted(value)
	return m.db.appendType(dst, m.Register.Type, value, m.Register.Width, m.Register.Shr, mask)
}

func (db *DB) appendType(dst []byte, t Type, v uint64, width, shr uint, mask uint64) []byte {
	switch t.Kind {
	case KindEnum:
		if name, ok := db.enumName(t.Enum, v<<shr); ok {
			dst = append(dst, '(')
			dst = append(dst, name...)
			return append(dst, ')')
		}
		return dst
	case KindBitset:
		return db.appendBitset(dst, t.Bitset, v, width, mask, 0)
	case KindUint, KindInt, KindFloat:
		dst = append(dst, '(')
		dst = appendScalar(dst, t.Kind, v<<shr, width)
		return append(dst, ')')
	}
	return dst
}

func (db *DB) appendBitset(dst []byte, bs *Bitset, v uint64, width uint, mask uint64, depth int) []byte {
	dst = append(dst, '{')
	if depth > maxDecodeDepth {
		return append(dst, '}')
	}
	start := len(dst)
	sep := func() {
		if len(dst) > start {
			dst = append(dst, ", "...)
		}
	}
	var covered uint64
	if bs != nil {
		for _, f := range bs.Fields {
			fm := f.Mask()
			if fm&mask == 0 || !db.included(f.Variants) {
				continue
			}
			covered |= fm
			fv := (v & fm) >> f.Low << f.Shr
			fw := f.High - f.Low + 1
			switch f.Type.Kind {
			case KindEnum:
				name, ok := db.enumName(f.Type.Enum, fv)
				if !ok && fv == 0 {
					continue
				}
				sep()
				dst = append(dst, f.Name...)
				dst = append(dst, '=')
				if ok {
					dst = append(dst, name...)
				} else {
					dst = appendScalar(dst, KindHex, fv, fw)
				}
			case KindBitset:
				if fv == 0 {
					continue
				}
				sep()
				dst = append(dst, f.Name...)
				dst = append(dst, '=')
				dst = db.appendBitset(dst, f.Type.Bitset, fv>>f.Shr, fw, fieldMask(fw), depth+1)
			case KindBool:
				if fv == 0 {
					continue
				}
				sep()
				dst = append(dst, f.Name...)
				if fw > 1 {
					dst = append(dst, '=')
					dst = appendScalar(dst, KindHex, fv, fw)
				}
			default:
				if fv == 0 {
					continue
				}
				sep()
				dst = append(dst, f.Name...)
				dst = append(dst, '=')
				dst = appendScalar(dst, f.Type.Kind, fv, fw)
			}
		}
	}
	if unk := v &^ covered & mask; unk != 0 {
		sep()
		dst = append(dst, "unk=0x"...)
		dst = strconv.AppendUint(dst, unk, 16)
	}
	return append(dst, '}')
}

// AppendFormat appends "NAME = 0xVALUE DECODED" for an access of value,
// as in "CTRL = 0x00140240 {ASDE, SLU, SPEED=1000}". The value is padded
// to the access width.
func (m Match) AppendFormat(dst []byte, value uint64) []byte {
	dst = m.AppendName(dst)
	dst = append(dst, " = "...)
	dst = appendHexPadded(dst, value, m.accessWidth())
	if m.Register.Type.Kind == KindHex || m.Register.Type.Kind == KindAddress || m.Register.Type.Kind == KindBool {
		return dst
	}
	dst = append(dst, ' ')
	n := len(dst)
	dst = m.AppendDecoded(dst, value)
	if len(dst) == n {
		dst = dst[:n-1]
	}
	return dst
}

// Format is AppendFormat returning a string.
func (m Match) Format(value uint64) string { return string(m.AppendFormat(nil, value)) }

func (m Match) accessWidth() uint {
	if m.Width != 0 {
		return m.Width
	}
	return m.Register.Width
}

const hexDigits = "0123456789abcdef"

func appendHexPadded(dst []byte, v uint64, width uint) []byte {
	digits := int(width+3) / 4
	if digits < 1 {
		digits = 1
	}
	if digits > 16 {
		digits = 16
	}
	dst = append(dst, "0x"...)
	for i := digits - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[v>>(uint(i)*4)&0xf])
	}
	return dst
}

// FormatFields formats decoded fields in the compact form "{A, B=1}".
func FormatFields(fs []Field) string {
	var b strings.Builder
	b.Write(appendFields(nil, fs))
	return b.String()
}
