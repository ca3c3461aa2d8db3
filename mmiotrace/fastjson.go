package mmiotrace

import (
	"encoding/binary"
	"math/bits"
)

// The constant parts of an mmio_access record as appendAccessLines
// writes them: the start up to the ts_ns digits (for the kind "R" and
// width 4: the line's own are written over them at headKind and
// headWidth), and the keys between the numbers with the bytes around
// them.
var (
	accessHead  = [len(`{"kind":"mmio_access","access":"R","width":4,"ts_ns":`)]byte([]byte(`{"kind":"mmio_access","access":"R","width":4,"ts_ns":`))
	usMapKey    = [len(`000,"map_id":`)]byte([]byte(`000,"map_id":`))
	pcNullClose = [len(`","pc":null}` + "\n")]byte([]byte(`","pc":null}` + "\n"))
)

const (
	headKind  = len(`{"kind":"mmio_access","access":"`)
	headWidth = len(accessR)
	// pcClose is `"}` and the newline as the bytes of a little-endian word.
	pcClose = '"' | '}'<<8 | '\n'<<16
)

// accessWinLen is the room appendAccessLines makes for each record. It
// writes the record through an array of this size at offsets masked to
// 0..255, with stores of at most 16 bytes, so that the compiler can drop
// the bounds checks; a record without "func" is at most 171 bytes and
// the last store ends before byte 180.
const accessWinLen = 256 + 16

// accessWin is the part of the output appendAccessLines writes a record
// into.
type accessWin = [accessWinLen]byte

// put64 stores the eight bytes of v at d[i:], the low byte first. i is
// at most 168: the mask changes nothing but lets the compiler drop the
// bounds check.
func put64(d *accessWin, i int, v uint64) {
	binary.LittleEndian.PutUint64(d[i&255:], v)
}

// appendAccessLines is the hot path of 'mmio read --json'
// (ConvertOptions.AccessNDJSON): it writes the mmio_access records of the
// R/W lines at the start of data straight from the lines' bytes, without
// converting a number or filling a Record. A line qualifies when it has
// the kernel's usual form, the one parseRWFast takes ("R|W <w>
// <sec>.<6 digits> <id> 0x<hex> 0x<hex> 0x<hex> <pid>\n", 1 to 7 digits
// of seconds, map id and PID, 1 to 16 digits or lower-case letters per
// hex field), checked field by field a word at a time as parseRWFast
// does, and its numbers are written as NDJSONEncoder writes them (no
// leading zero in the seconds, the map id or a hex field; seconds not
// 0): then the record's digits are the line's, copied. It stops at the
// first line that does not qualify or that starts in the last rwFastLen
// bytes of data; the caller formats that one from its Record.
//
// Each line is done by accessLine, which writes each field as soon as it
// is checked, into room made past the end of out: a line found not to
// qualify leaves out's length as it was. Digits are copied 8 or 16 at a
// time; the next store overwrites what follows them.
//
// It returns the bytes and lines taken and out with their records
// appended: the bytes NDJSONEncoder.Append writes for the records
// parseRWFast fills from the same lines (TestAccessLinesMatchEncoder,
// FuzzAccessLines).
func appendAccessLines(data, out []byte) (int, int64, []byte) {
	var lines int64
	p := 0
	for p <= len(data)-rwFastLen {
		if cap(out)-len(out) < accessWinLen {
			out = append(out, make([]byte, accessWinLen)...)[:len(out)]
		}
		in, o := accessLine((*rwWindow)(data[p:]), (*accessWin)(out[len(out):cap(out)]))
		if in == 0 {
			break
		}
		out = out[:len(out)+o]
		p += in
		lines++
	}
	return p, lines, out
}

// accessLine writes the mmio_access record of the line at the start of a
// to d and returns the line's length and the record's, or 0, 0 if the
// line does not qualify (appendAccessLines).
func accessLine(a *rwWindow, d *accessWin) (int, int) {
	k, w := a[0], a[2]
	if (k != 'R' && k != 'W') || a[1] != ' ' || w-'0' > 8 || (0x116>>(w-'0'))&1 == 0 || a[3] != ' ' {
		return 0, 0
	}
	*(*[len(accessHead)]byte)(d[:]) = accessHead
	d[headKind], d[headWidth] = k, w
	// Seconds: 1 to 7 digits, the first not 0, then '.'.
	x := le64(a, 4)
	n := bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || at(a, 4+n) != '.' || byte(x) == '0' {
		return 0, 0
	}
	o := len(accessHead)
	put64(d, o, x)
	o += n
	// ".dddddd ": ts_ns is the seconds, the six digits and "000".
	i := 4 + n
	x = le64(a, i)
	if byte(x>>56) != ' ' || nonDigitMask(x)&0x0080808080808000 != 0 {
		return 0, 0
	}
	put64(d, o, le64(a, i+1))
	o += 6
	*(*[len(usMapKey)]byte)(d[o&255:]) = usMapKey
	o += len(usMapKey)
	// Map id: 1 to 7 digits (no leading zero), then a space.
	i += 8
	x = le64(a, i)
	n = bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || at(a, i+n) != ' ' || (n > 1 && byte(x) == '0') {
		return 0, 0
	}
	put64(d, o, x)
	o += n
	*(*[len(physKey)]byte)(d[o&255:]) = physKey
	o += len(physKey)
	// The physical address: 1 to 8 hex digits here (a 32-bit BAR),
	// else hexSpan.
	i += n + 1
	if le16(a, i) != 'x'<<8|'0' {
		return 0, 0
	}
	x = le64(a, i+2)
	if n = bits.TrailingZeros64(nonHexMask(x)) >> 3; at(a, i+2+n) != ' ' {
		if n = hexSpan(a, i); n == 0 {
			return 0, 0
		}
	} else if n == 0 || (n > 1 && byte(x) == '0') {
		return 0, 0
	}
	put64(d, o, x)
	put64(d, o+8, le64(a, i+10))
	o += n
	*(*[len(valKey)]byte)(d[o&255:]) = valKey
	o += len(valKey)
	// The value: as the address.
	i += n + 3
	if le16(a, i) != 'x'<<8|'0' {
		return 0, 0
	}
	x = le64(a, i+2)
	if n = bits.TrailingZeros64(nonHexMask(x)) >> 3; at(a, i+2+n) != ' ' {
		if n = hexSpan(a, i); n == 0 {
			return 0, 0
		}
	} else if n == 0 || (n > 1 && byte(x) == '0') {
		return 0, 0
	}
	put64(d, o, x)
	put64(d, o+8, le64(a, i+10))
	o += n
	// The PC: 16 digits here (kernel text), else hexSpan; a PC of 0
	// was not recorded (null).
	i += n + 3
	x = le64(a, i+2)
	y := le64(a, i+10)
	if le16(a, i) == 'x'<<8|'0' && nonHexMask(x)|nonHexMask(y) == 0 && at(a, i+18) == ' ' && byte(x) != '0' {
		n = 16
	} else if n = hexSpan(a, i); n == 0 {
		return 0, 0
	}
	i += n + 3
	if n == 1 && byte(x) == '0' {
		*(*[len(pcNullClose)]byte)(d[o&255:]) = pcNullClose
		o += len(pcNullClose)
	} else {
		*(*[len(pcKey)]byte)(d[o&255:]) = pcKey
		o += len(pcKey)
		put64(d, o, x)
		put64(d, o+8, y)
		o += n
		put64(d, o, pcClose)
		o += 3
	}
	// PID: 1 to 7 digits, then the newline.
	x = le64(a, i)
	n = bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || at(a, i+n) != '\n' {
		return 0, 0
	}
	return i + n + 1, o
}

// hexSpan returns the number of digits of the "0x<hex> " field at a[i:]
// (1 to 16 digits or lower-case letters, as hex0xSpFast takes), or 0 if
// it is not one or has a leading zero (a single "0" is fine). It reads
// a[i:i+19].
func hexSpan(a *rwWindow, i int) int {
	if le16(a, i) != 'x'<<8|'0' {
		return 0
	}
	x := le64(a, i+2)
	n := 0
	if m := nonHexMask(x); m != 0 {
		n = bits.TrailingZeros64(m) >> 3
		if n == 0 || byte(x>>(8*n)) != ' ' {
			return 0
		}
	} else {
		y := le64(a, i+10)
		m := nonHexMask(y)
		if m == 0 {
			if at(a, i+18) != ' ' {
				return 0
			}
			n = 16
		} else {
			k := bits.TrailingZeros64(m) >> 3
			if byte(y>>(8*k)) != ' ' {
				return 0
			}
			n = 8 + k
		}
	}
	if n > 1 && byte(x) == '0' {
		return 0
	}
	return n
}
