package ndjson

import (
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// Version is the schema version of every stream, the "schema" field of
// the "input" record that starts it (docs/ndjson.md: change policy).
const Version = 1

// sep appends the comma that separates a member or element from the one
// before it, unless b ends an opening brace or bracket.
func sep(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' && b[n-1] != '[' {
		b = append(b, ',')
	}
	return b
}

// Key appends the key k of the next member: `,"k":`.
func Key(b []byte, k string) []byte {
	b = sep(b)
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// Begin starts a record of kind, a constant of docs/ndjson.md (not
// escaped): `{"kind":"KIND"`.
func Begin(b []byte, kind string) []byte {
	b = append(b, `{"kind":"`...)
	b = append(b, kind...)
	return append(b, '"')
}

// End closes a record and its line.
func End(b []byte) []byte { return append(b, '}', '\n') }

// Input appends the record that starts every stream and names its input:
// the schema version, the source ("usb", "mmio", "events", "pt", ...), the
// file ("-" for standard input, "" for none: null), its format, and the
// clock of the stream's ts_ns fields ("" for none: null).
func Input(b []byte, source, file, format, clock string) []byte {
	b = Begin(b, "input")
	b = Int(b, "schema", Version)
	b = Str(b, "source", source)
	b = StrOrNull(b, "file", file)
	b = StrOrNull(b, "format", format)
	return StrOrNull(b, "clock", clock)
}

// Open starts an object member k.
func Open(b []byte, k string) []byte { return append(Key(b, k), '{') }

// Close ends an object.
func Close(b []byte) []byte { return append(b, '}') }

// OpenArray starts an array member k.
func OpenArray(b []byte, k string) []byte { return append(Key(b, k), '[') }

// CloseArray ends an array.
func CloseArray(b []byte) []byte { return append(b, ']') }

// OpenElem starts an object element of an array.
func OpenElem(b []byte) []byte { return append(sep(b), '{') }

// Str appends the member k with the string value s.
func Str(b []byte, k, s string) []byte { return AppendString(Key(b, k), s) }

// StrOrNull is Str, with null for "".
func StrOrNull(b []byte, k, s string) []byte {
	if s == "" {
		return Null(b, k)
	}
	return Str(b, k, s)
}

// StrElem appends the string s as an array element.
func StrElem(b []byte, s string) []byte { return AppendString(sep(b), s) }

// Bytes appends the member k with the bytes s as a string value.
func Bytes(b []byte, k string, s []byte) []byte { return appendStringBytes(Key(b, k), s) }

// Int appends the member k with the number v.
func Int(b []byte, k string, v int64) []byte { return AppendInt(Key(b, k), v) }

// Int1000 appends the member k with the number v*1000 (AppendInt1000).
func Int1000(b []byte, k string, v int64) []byte { return AppendInt1000(Key(b, k), v) }

// Uint appends the member k with the number v.
func Uint(b []byte, k string, v uint64) []byte { return AppendUint(Key(b, k), v) }

// IntElem appends the number v as an array element.
func IntElem(b []byte, v int64) []byte { return AppendInt(sep(b), v) }

// Float appends the member k with the number v, in the shortest form that
// reads back as v (null for NaN and infinities, which JSON lacks).
func Float(b []byte, k string, v float64) []byte { return AppendFloat(Key(b, k), v) }

// Bool appends the member k with true or false.
func Bool(b []byte, k string, v bool) []byte {
	b = Key(b, k)
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// Null appends the member k with the value null.
func Null(b []byte, k string) []byte { return append(Key(b, k), "null"...) }

// Raw appends the member k with v, which must be one JSON value.
func Raw(b []byte, k string, v []byte) []byte { return append(Key(b, k), v...) }

const hexDigits = "0123456789abcdef"

// Hex appends the member k with the bytes p as a string of lower-case hex
// digits, two per byte.
func Hex(b []byte, k string, p []byte) []byte {
	b = append(Key(b, k), '"')
	b = AppendHex(b, p)
	return append(b, '"')
}

// HexUint appends the member k with v as a string "0x..." in lower-case
// hex without leading zeros (addresses, register values: numbers beyond
// 2^53 are not exact in many JSON readers).
func HexUint(b []byte, k string, v uint64) []byte {
	return AppendHexUint(Key(b, k), v)
}

// AppendHexUint appends "0x..." (with the quotes).
func AppendHexUint(b []byte, v uint64) []byte {
	b = append(b, '"', '0', 'x')
	b = AppendHexUint64(b, v)
	return append(b, '"')
}

// AppendFloat appends v as a JSON number: the shortest decimal that reads
// back as v, in plain notation from 1e-6 to 1e21 and exponent notation
// outside (as encoding/json does); null for NaN and infinities.
func AppendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(v)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b = strconv.AppendFloat(b, v, 'e', -1, 64)
		// e-07 -> e-7, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// safe[c] is true for the ASCII bytes that stand for themselves in a JSON
// string.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string (with the quotes).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && safe[s[i]] {
		i++
	}
	if i == len(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	b = append(b, s[:i]...)
	return appendEscaped(b, s[i:])
}

func appendStringBytes(b []byte, s []byte) []byte {
	b = append(b, '"')
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && safe[s[i]] {
		i++
	}
	if i == len(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	b = append(b, s[:i]...)
	return appendEscaped(b, string(s[i:])) // rare: escapes needed
}

// appendEscaped appends s escaped and the closing quote.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Writer writes records to an io.Writer through its buffer B: append a
// record to B (Begin ... End), then call Flushed, which writes B out once
// it holds FlushAt bytes (at every record when Live).
type Writer struct {
	B       []byte
	W       io.Writer
	Live    bool // write every record at once (a capture piped in)
	FlushAt int  // 0: 64 KiB
	err     error
}

// NewWriter returns a Writer to w with a 64 KiB buffer.
func NewWriter(w io.Writer) *Writer {
	return &Writer{W: w, B: make([]byte, 0, 1<<16+4096)}
}

// Flushed writes the buffer out when it is full enough (or Live) and
// returns the first write error.
func (w *Writer) Flushed() error {
	at := w.FlushAt
	if at == 0 {
		at = 1 << 16
	}
	if w.Live || len(w.B) >= at {
		return w.Flush()
	}
	return w.err
}

// Flush writes out what the buffer holds.
func (w *Writer) Flush() error {
	if w.err == nil && len(w.B) > 0 {
		_, w.err = w.W.Write(w.B)
	}
	w.B = w.B[:0]
	return w.err
}

// AppendStringBytes appends s as a JSON string (with the quotes).
func AppendStringBytes(b []byte, s []byte) []byte { return appendStringBytes(b, s) }

// AnyKey appends the key k of the next member escaped as a JSON string
// (keys that come from the data: event field names).
func AnyKey(b []byte, k string) []byte {
	b = AppendString(sep(b), k)
	return append(b, ':')
}
