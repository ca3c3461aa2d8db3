package mmiotrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrFormat is wrapped by every ParseError.
var ErrFormat = errors.New("bad mmiotrace line")

// ParseError reports a line that starts with a record keyword but does
// not parse. Line is 1-based (0 when parsing a lone line with ParseLine).
type ParseError struct {
	Line  int64
	Kind  Kind
	Field string // the field that failed, e.g. "physical address"
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("mmiotrace: line %d: %v: %s record: bad %s", e.Line, ErrFormat, e.Kind, e.Field)
	}
	return fmt.Sprintf("mmiotrace: %v: %s record: bad %s", ErrFormat, e.Kind, e.Field)
}

func (e *ParseError) Unwrap() error { return ErrFormat }

// ParseLine parses one log line (without its newline) into r. Lines that
// are not records become KindComment or KindOther with Text set; a line
// starting with a record keyword that does not parse is a *ParseError.
// r's slices alias line.
func ParseLine(line []byte, r *Record) error {
	if f := parseLine(line, r); f != "" {
		return &ParseError{Kind: r.Kind, Field: f}
	}
	return nil
}

// hexVal maps a byte to its hex digit value, 0xff when not a hex digit.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()

// hexAt parses hex digits at b[i:], returning the value and the index
// after them; ok is false for no digits or more than 16.
func hexAt(b []byte, i int) (v uint64, j int, ok bool) {
	j = i
	for j < len(b) {
		d := hexVal[b[j]]
		if d == 0xff {
			break
		}
		v = v<<4 | uint64(d)
		j++
	}
	n := j - i
	return v, j, n > 0 && n <= 16
}

// hex0xAt parses "0x" then hex digits. Fields of 1, 8 or 16 digits
// followed by a space (the common addresses, values and PCs) take
// branch-free paths.
func hex0xAt(b []byte, i int) (uint64, int, bool) {
	if i+2 > len(b) || b[i] != '0' || b[i+1] != 'x' {
		return 0, i, false
	}
	j := i + 2
	if j+16 < len(b) {
		if b[j+1] == ' ' {
			if h := hexVal[b[j]]; h <= 15 {
				return uint64(h), j + 1, true
			}
		} else if b[j+8] == ' ' {
			if v, ok := hex8At(b[j : j+8 : j+8]); ok {
				return v, j + 8, true
			}
		} else if b[j+16] == ' ' {
			if v, ok := hex16At(b[j : j+16 : j+16]); ok {
				return v, j + 16, true
			}
		}
	}
	return hexAt(b, j)
}

// hex8At converts exactly eight hex digits. Digits and lower-case letters
// (what the kernel prints) are checked and converted eight at a time in
// one 64-bit word; anything else takes the per-byte table.
func hex8At(d []byte) (uint64, bool) {
	if len(d) < 8 {
		return 0, false
	}
	const ones, high = 0x0101010101010101, 0x8080808080808080
	x := binary.LittleEndian.Uint64(d)
	// Per byte (all below 0x80): high bit of x+(0x80-lo) set iff b >= lo,
	// of x+(0x7f-hi) set iff b > hi; no carry crosses bytes.
	digit := (x + (0x80-'0')*ones) &^ (x + (0x7f-'9')*ones)
	lower := (x + (0x80-'a')*ones) &^ (x + (0x7f-'f')*ones)
	if x&high == 0 && (digit|lower)&high == high {
		return hexWord(x), true
	}
	h0, h1, h2, h3 := hexVal[d[0]], hexVal[d[1]], hexVal[d[2]], hexVal[d[3]]
	h4, h5, h6, h7 := hexVal[d[4]], hexVal[d[5]], hexVal[d[6]], hexVal[d[7]]
	v := uint64(h0)<<28 | uint64(h1)<<24 | uint64(h2)<<20 | uint64(h3)<<16 |
		uint64(h4)<<12 | uint64(h5)<<8 | uint64(h6)<<4 | uint64(h7)
	return v, (h0|h1|h2|h3|h4|h5|h6|h7)&0xf0 == 0
}

// hex16At converts exactly sixteen digits and lower-case letters (the
// kernel's 64-bit addresses) as two words; ok is false for anything else
// (the caller then takes the per-byte path).
func hex16At(d []byte) (uint64, bool) {
	if len(d) < 16 {
		return 0, false
	}
	const ones, high = 0x0101010101010101, 0x8080808080808080
	x := binary.LittleEndian.Uint64(d)
	y := binary.LittleEndian.Uint64(d[8:])
	dx := (x + (0x80-'0')*ones) &^ (x + (0x7f-'9')*ones)
	lx := (x + (0x80-'a')*ones) &^ (x + (0x7f-'f')*ones)
	dy := (y + (0x80-'0')*ones) &^ (y + (0x7f-'9')*ones)
	ly := (y + (0x80-'a')*ones) &^ (y + (0x7f-'f')*ones)
	if (x|y)&high != 0 || (dx|lx)&(dy|ly)&high != high {
		return 0, false
	}
	return hexWord(x)<<32 | hexWord(y), true
}

// hexWord converts eight checked digits or lower-case letters, the first
// in the low byte, to their value.
func hexWord(x uint64) uint64 {
	const ones = 0x0101010101010101
	v := x&(0x0f*ones) + (x>>6)&ones*9
	v = (v&0x000f000f000f000f)<<4 | (v>>8)&0x000f000f000f000f
	v = (v&0x000000ff000000ff)<<8 | (v>>16)&0x000000ff000000ff
	return (v&0xffff)<<16 | (v>>32)&0xffff
}

// decAt parses unsigned decimal digits (at most 19).
func decAt(b []byte, i int) (v uint64, j int, ok bool) {
	j = i
	for j < len(b) {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + uint64(c)
		j++
	}
	n := j - i
	return v, j, n > 0 && n <= 19
}

// intAt parses a signed 32-bit decimal.
func intAt(b []byte, i int) (int32, int, bool) {
	// One digit followed by a space or the end: map ids and the PID.
	if i+1 < len(b) && (b[i+1] == ' ' || b[i+1] == '\n') || i+1 == len(b) {
		if i < len(b) {
			if c := b[i] - '0'; c <= 9 {
				return int32(c), i + 1, true
			}
		}
	}
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	v, j, ok := decAt(b, i)
	if !ok || v > 1<<31 || (!neg && v > 1<<31-1) {
		return 0, j, false
	}
	if neg {
		return int32(-int64(v)), j, true
	}
	return int32(v), j, true
}

// tsAt parses a timestamp "SECS[.FRAC]".
func tsAt(b []byte, i int) (Timestamp, int, bool) {
	sec, j, ok := decAt(b, i)
	if !ok || sec > 18446744072 {
		return Timestamp{}, j, false
	}
	t := Timestamp{NS: sec * 1e9}
	// The kernel's "%06lu" microseconds.
	if j+7 < len(b) && b[j] == '.' && b[j+7] == ' ' {
		d := b[j+1 : j+7 : j+7]
		c0, c1, c2, c3, c4, c5 := d[0]-'0', d[1]-'0', d[2]-'0', d[3]-'0', d[4]-'0', d[5]-'0'
		if c0 <= 9 && c1 <= 9 && c2 <= 9 && c3 <= 9 && c4 <= 9 && c5 <= 9 {
			us := uint64(c0)*100000 + uint64(c1)*10000 + uint64(c2)*1000 + uint64(c3)*100 + uint64(c4)*10 + uint64(c5)
			t.NS += us * 1000
			t.Digits = 6
			return t, j + 7, true
		}
	}
	if j < len(b) && b[j] == '.' {
		f, k, ok := decAt(b, j+1)
		d := k - (j + 1)
		if !ok || d > 9 {
			return Timestamp{}, k, false
		}
		t.NS += f * pow10[9-d]
		t.Digits = uint8(d)
		j = k
	}
	return t, j, true
}

func sp(b []byte, i int) bool { return i < len(b) && b[i] == ' ' }

// parseLine fills r from line and returns "" or the name of the bad field.
func parseLine(line []byte, r *Record) string {
	r.Line = line
	r.Text = nil
	// Only R and W lines have a PC: a record reused for the next line
	// must not keep the previous access's (mmio read --symbols named a
	// MARK after the access before it).
	r.PC = 0
	if len(line) < 2 {
		return other(line, r)
	}
	switch line[0] {
	case 'R':
		if line[1] == ' ' {
			r.Kind = KindRead
			return parseRW(line, r)
		}
	case 'W':
		if line[1] == ' ' {
			r.Kind = KindWrite
			return parseRW(line, r)
		}
	case 'M':
		if bytes.HasPrefix(line, []byte("MAP ")) {
			r.Kind = KindMap
			return parseMap(line, r)
		}
		if bytes.HasPrefix(line, []byte("MARK ")) {
			r.Kind = KindMark
			return parseMark(line, r)
		}
	case 'U':
		if bytes.HasPrefix(line, []byte("UNMAP ")) {
			r.Kind = KindUnmap
			return parseUnmap(line, r)
		}
		if bytes.HasPrefix(line, []byte("UNKNOWN ")) {
			r.Kind = KindUnknown
			return parseUnknown(line, r)
		}
	case 'V':
		if bytes.HasPrefix(line, []byte("VERSION ")) {
			r.Kind = KindVersion
			r.Text = line[len("VERSION "):]
			return ""
		}
	case 'L':
		if bytes.HasPrefix(line, []byte("LSPCI ")) {
			r.Kind = KindLSPCI
			r.Text = line[len("LSPCI "):]
			return ""
		}
	case 'P':
		if bytes.HasPrefix(line, []byte("PCIDEV ")) {
			r.Kind = KindPCIDev
			return parsePCIDev(line, r)
		}
	case '#':
		r.Kind = KindComment
		r.Text = line
		return ""
	}
	return other(line, r)
}

func other(line []byte, r *Record) string {
	if len(line) > 0 && line[0] == '#' {
		r.Kind = KindComment
	} else {
		r.Kind = KindOther
	}
	r.Text = line
	return ""
}

// parseRW parses "R %d %u.%06lu %d 0x%llx 0x%lx 0x%lx %d".
func parseRW(b []byte, r *Record) string {
	end, f := parseRWFields(b, r)
	if f == "" && end != len(b) {
		return "pid"
	}
	return f
}

// parseRWFields parses an R/W record at the start of b and returns the
// index after the PID, which the caller checks is the end of the line.
func parseRWFields(b []byte, r *Record) (int, string) {
	i := 2
	w, i, ok := decAt(b, i)
	if !ok || (w != 1 && w != 2 && w != 4 && w != 8) || !sp(b, i) {
		return i, "width"
	}
	r.Width = uint8(w)
	if r.Time, i, ok = tsAt(b, i+1); !ok || !sp(b, i) {
		return i, "timestamp"
	}
	if r.MapID, i, ok = intAt(b, i+1); !ok || !sp(b, i) {
		return i, "map id"
	}
	if r.Phys, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return i, "physical address"
	}
	if r.Value, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return i, "value"
	}
	if r.PC, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return i, "pc"
	}
	if r.PID, i, ok = intAt(b, i+1); !ok {
		return i, "pid"
	}
	return i, ""
}

// parseMap parses "MAP %u.%06lu %d 0x%llx 0x%lx 0x%lx 0x%lx %d".
func parseMap(b []byte, r *Record) string {
	var ok bool
	i := len("MAP ")
	if r.Time, i, ok = tsAt(b, i); !ok || !sp(b, i) {
		return "timestamp"
	}
	if r.MapID, i, ok = intAt(b, i+1); !ok || !sp(b, i) {
		return "map id"
	}
	if r.Phys, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return "physical address"
	}
	if r.Virt, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return "virtual address"
	}
	if r.Len, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return "length"
	}
	if r.PC, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return "pc"
	}
	if r.PID, i, ok = intAt(b, i+1); !ok || i != len(b) {
		return "pid"
	}
	return ""
}

// parseUnmap parses "UNMAP %u.%06lu %d 0x%lx %d".
func parseUnmap(b []byte, r *Record) string {
	var ok bool
	i := len("UNMAP ")
	if r.Time, i, ok = tsAt(b, i); !ok || !sp(b, i) {
		return "timestamp"
	}
	if r.MapID, i, ok = intAt(b, i+1); !ok || !sp(b, i) {
		return "map id"
	}
	if r.PC, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return "pc"
	}
	if r.PID, i, ok = intAt(b, i+1); !ok || i != len(b) {
		return "pid"
	}
	return ""
}

// parseUnknown parses "UNKNOWN %u.%06lu %d 0x%llx %02x,%02x,%02x 0x%lx %d".
func parseUnknown(b []byte, r *Record) string {
	var ok bool
	i := len("UNKNOWN ")
	if r.Time, i, ok = tsAt(b, i); !ok || !sp(b, i) {
		return "timestamp"
	}
	if r.MapID, i, ok = intAt(b, i+1); !ok || !sp(b, i) {
		return "map id"
	}
	if r.Phys, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return "physical address"
	}
	i++
	for k := 0; k < 3; k++ {
		if i+2 > len(b) || hexVal[b[i]] == 0xff || hexVal[b[i+1]] == 0xff {
			return "opcode bytes"
		}
		r.Opcode[k] = hexVal[b[i]]<<4 | hexVal[b[i+1]]
		i += 2
		sep := byte(',')
		if k == 2 {
			sep = ' '
		}
		if i >= len(b) || b[i] != sep {
			return "opcode bytes"
		}
		i++
	}
	if r.PC, i, ok = hex0xAt(b, i); !ok || !sp(b, i) {
		return "pc"
	}
	if r.PID, i, ok = intAt(b, i+1); !ok || i != len(b) {
		return "pid"
	}
	return ""
}

// parseMark parses "MARK %u.%06lu TEXT".
func parseMark(b []byte, r *Record) string {
	t, i, ok := tsAt(b, len("MARK "))
	if !ok {
		return "timestamp"
	}
	r.Time = t
	switch {
	case i == len(b):
		r.Text = b[i:]
	case b[i] == ' ':
		r.Text = b[i+1:]
	default:
		return "timestamp"
	}
	return ""
}

// parsePCIDev parses "PCIDEV %02x%02x %04x%04x %x" then 7 bases and 7
// sizes (" %llx" each), then " DRIVER" or " ".
func parsePCIDev(b []byte, r *Record) string {
	p := &r.PCI
	i := len("PCIDEV ")
	v, j, ok := hexAt(b, i)
	if !ok || j-i != 4 || !sp(b, j) {
		return "bus/devfn"
	}
	p.Bus, p.DevFn = uint8(v>>8), uint8(v)
	i = j + 1
	v, j, ok = hexAt(b, i)
	if !ok || j-i != 8 || !sp(b, j) {
		return "vendor/device id"
	}
	p.Vendor, p.Device = uint16(v>>16), uint16(v)
	if p.IRQ, i, ok = hexAt(b, j+1); !ok {
		return "irq"
	}
	for k := 0; k < 14; k++ {
		if !sp(b, i) {
			return "resource"
		}
		var x uint64
		if x, i, ok = hexAt(b, i+1); !ok {
			return "resource"
		}
		if k < 7 {
			p.Base[k] = x
		} else {
			p.Size[k-7] = x
		}
	}
	p.Driver = nil
	p.NoTrailingSpace = false
	switch {
	case i == len(b):
		p.NoTrailingSpace = true
	case b[i] == ' ':
		p.Driver = b[i+1:]
		if bytes.IndexByte(p.Driver, ' ') >= 0 {
			return "driver name"
		}
	default:
		return "resource"
	}
	return ""
}

// hexWordOK reports whether the eight bytes of x (first in the low byte)
// are all digits or lower-case hex letters.
func hexWordOK(x uint64) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	digit := (x + (0x80-'0')*ones) &^ (x + (0x7f-'9')*ones)
	lower := (x + (0x80-'a')*ones) &^ (x + (0x7f-'f')*ones)
	return x&high == 0 && (digit|lower)&high == high
}

// hex0xSkip accepts exactly what hex0xAt accepts ("0x", 1 to 16 hex
// digits) and returns the index after it, without converting.
func hex0xSkip(b []byte, i int) (int, bool) {
	if i+2 > len(b) || b[i] != '0' || b[i+1] != 'x' {
		return i, false
	}
	j := i + 2
	if j+16 < len(b) {
		if b[j+8] == ' ' && hexWordOK(binary.LittleEndian.Uint64(b[j:])) {
			return j + 8, true
		}
		if b[j+16] == ' ' && hexWordOK(binary.LittleEndian.Uint64(b[j:])) && hexWordOK(binary.LittleEndian.Uint64(b[j+8:])) {
			return j + 16, true
		}
	}
	_, j, ok := hexAt(b, j)
	return j, ok
}

// tsSkip accepts exactly what tsAt accepts and returns the index after
// it; the value is left unconverted.
func tsSkip(b []byte, i int) (int, bool) {
	sec, j, ok := decAt(b, i)
	if !ok || sec > 18446744072 {
		return j, false
	}
	if j+7 < len(b) && b[j] == '.' && b[j+7] == ' ' {
		if x := binary.LittleEndian.Uint64(b[j:]); (x+(0x80-'0')*0x0001010101010100)&^(x+(0x7f-'9')*0x0001010101010100)&0x0080808080808000 == 0x0080808080808000 && x&0x0080808080808000 == 0 {
			return j + 7, true
		}
	}
	if j < len(b) && b[j] == '.' {
		_, k, ok := decAt(b, j+1)
		if !ok || k-(j+1) > 9 {
			return k, false
		}
		j = k
	}
	return j, true
}

// scanRWFields validates an R/W record at the start of b exactly as
// parseRWFields does but converts only the fields a filter without value
// and time criteria needs (Width, MapID, Phys). On failure the caller
// parses the line with parseLine for the error.
func scanRWFields(b []byte, r *Record) (int, bool) {
	i := 2
	w, i, ok := decAt(b, i)
	if !ok || (w != 1 && w != 2 && w != 4 && w != 8) || !sp(b, i) {
		return i, false
	}
	r.Width = uint8(w)
	if i, ok = tsSkip(b, i+1); !ok || !sp(b, i) {
		return i, false
	}
	if r.MapID, i, ok = intAt(b, i+1); !ok || !sp(b, i) {
		return i, false
	}
	if r.Phys, i, ok = hex0xAt(b, i+1); !ok || !sp(b, i) {
		return i, false
	}
	if i, ok = hex0xSkip(b, i+1); !ok || !sp(b, i) {
		return i, false
	}
	if i, ok = hex0xSkip(b, i+1); !ok || !sp(b, i) {
		return i, false
	}
	_, i, ok = intAt(b, i+1)
	return i, ok
}
