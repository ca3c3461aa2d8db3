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

// accessWinLen is the room appendAccessLines makes for each record: the
// longest record without "func" is 171 bytes, and the 8-byte stores that
// write it (digits copied 8 at a time, keys) may reach up to byte 221
// when the compiler bounds the fields' lengths by 31 (below).
const accessWinLen = 256 + 16

// accessWin is the part of the output appendAccessLines writes a record
// into.
type accessWin = [accessWinLen]byte

// lineWinLen is how many bytes from the start of a line appendAccessLines
// reads through: the longest line it takes is 86 bytes, but the compiler
// bounds each field's length by 31 (hexSpan's result masked), so that
// the last load may start at byte 129 (the PID) as far as it can tell.
// With every index provably inside the arrays, no load or store has a
// bounds check or a mask.
const lineWinLen = 144

// lineWin is the part of the input appendAccessLines reads a line from.
type lineWin = [lineWinLen]byte

// lw64, lw32 and lw16 load the 8, 4 or 2 bytes at a[i:], the first in
// the low byte.
func lw64(a *lineWin, i int) uint64 { return binary.LittleEndian.Uint64(a[i:]) }
func lw32(a *lineWin, i int) uint32 { return binary.LittleEndian.Uint32(a[i:]) }
func lw16(a *lineWin, i int) uint16 { return binary.LittleEndian.Uint16(a[i:]) }

// put64 stores the eight bytes of v at d[i:], the low byte first.
func put64(d *accessWin, i int, v uint64) { binary.LittleEndian.PutUint64(d[i:], v) }

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
// first line that does not qualify or that starts in the last
// lineWinLen bytes of data; the caller formats that one from its Record.
//
// Each field is written as soon as it is checked, into room made past
// the end of out: a line found not to qualify leaves out's length as it
// was. Digits are copied 8 or 16 at a time; the next store overwrites
// what follows them. The usual lengths (a one-digit map id and PID, an
// 8-digit address, a 16-digit PC or 0) are taken by one test each,
// which the processor predicts: the next field's place is then known
// without waiting for the digits to be counted.
//
// It returns the bytes and lines taken and out with their records
// appended: the bytes NDJSONEncoder.Append writes for the records
// parseRWFast fills from the same lines (TestAccessLinesMatchEncoder,
// FuzzAccessLines).
func appendAccessLines(data, out []byte) (int, int64, []byte) {
	var lines int64
	rest := data
	for len(rest) >= lineWinLen {
		if cap(out)-len(out) < accessWinLen {
			out = append(out, make([]byte, accessWinLen)...)[:len(out)]
		}
		n0 := len(out)
		a := (*lineWin)(rest)
		d := (*accessWin)(out[n0 : n0+accessWinLen])
		k, w := a[0], a[2]
		if (k != 'R' && k != 'W') || a[1] != ' ' || w-'0' > 8 || (0x116>>(w-'0'))&1 == 0 || a[3] != ' ' {
			break
		}
		*(*[len(accessHead)]byte)(d[:]) = accessHead
		d[headKind], d[headWidth] = k, w
		// Seconds: 1 to 7 digits, the first not 0, then '.'.
		x := lw64(a, 4)
		n := decSpan(x)
		if n == 0 || a[4+n] != '.' || byte(x) == '0' {
			break
		}
		o := len(accessHead)
		put64(d, o, x)
		o += n
		// ".dddddd ": ts_ns is the seconds, the six digits and "000".
		i := 4 + n
		x = lw64(a, i)
		if byte(x>>56) != ' ' || nonDigitMask(x)&0x0080808080808000 != 0 {
			break
		}
		put64(d, o, lw64(a, i+1))
		o += 6
		*(*[len(usMapKey)]byte)(d[o:]) = usMapKey
		o += len(usMapKey)
		// Map id: 1 to 7 digits (no leading zero), then a space.
		i += 8
		x = lw64(a, i)
		if byte(x)-'0' <= 9 && byte(x>>8) == ' ' {
			n = 1
		} else if n = decSpan(x); n == 0 || a[i+n] != ' ' || (n > 1 && byte(x) == '0') {
			break
		}
		n &= 7 // (changes nothing: tells the compiler n < 8)
		put64(d, o, x)
		o += n
		*(*[len(physKey)]byte)(d[o:]) = physKey
		o += len(physKey)
		// The physical address: 8 digits (a 32-bit BAR) here, else 1 to
		// 7 here, else hexSpan.
		i += n + 1
		if lw16(a, i) != 'x'<<8|'0' {
			break
		}
		x = lw64(a, i+2)
		if m := nonHexMask(x); m == 0 && a[i+10] == ' ' && byte(x) != '0' {
			n = 8
		} else if n = hexRun(m); m == 0 || a[i+2+n] != ' ' {
			if n = hexSpan((*rwWindow)(a[:rwFastLen]), i) & 31; n == 0 {
				break
			}
		} else if n == 0 || (n > 1 && byte(x) == '0') {
			break
		}
		n &= 31
		put64(d, o, x)
		put64(d, o+8, lw64(a, i+10))
		o += n
		*(*[len(valKey)]byte)(d[o:]) = valKey
		o += len(valKey)
		// The value: 1 to 8 digits here (counted: their number changes
		// from line to line), else hexSpan.
		i += n + 3
		if lw16(a, i) != 'x'<<8|'0' {
			break
		}
		x = lw64(a, i+2)
		if n = bits.TrailingZeros64(nonHexMask(x)) >> 3; a[i+2+n] != ' ' {
			if n = hexSpan((*rwWindow)(a[:rwFastLen]), i) & 31; n == 0 {
				break
			}
		} else if n == 0 || (n > 1 && byte(x) == '0') {
			break
		}
		n &= 31
		put64(d, o, x)
		put64(d, o+8, lw64(a, i+10))
		o += n
		// The PC: 16 digits (kernel text) here, else 0 (not recorded:
		// null) here, else hexSpan.
		i += n + 3
		x = lw64(a, i+2)
		y := lw64(a, i+10)
		if lw16(a, i) == 'x'<<8|'0' && nonHexMask(x)|nonHexMask(y) == 0 && a[i+18] == ' ' && byte(x) != '0' {
			n = 16
		} else if lw32(a, i) == '0'|'x'<<8|'0'<<16|' '<<24 {
			n = 1
		} else if n = hexSpan((*rwWindow)(a[:rwFastLen]), i) & 31; n == 0 {
			break
		}
		n &= 31
		i += n + 3
		if n == 1 && byte(x) == '0' {
			*(*[len(pcNullClose)]byte)(d[o:]) = pcNullClose
			o += len(pcNullClose)
		} else {
			*(*[len(pcKey)]byte)(d[o:]) = pcKey
			o += len(pcKey)
			put64(d, o, x)
			put64(d, o+8, y)
			o += n
			put64(d, o, pcClose)
			o += 3
		}
		// PID: 1 to 7 digits, then the newline (one digit here, else any
		// number of them).
		x = lw64(a, i)
		if byte(x)-'0' <= 9 && byte(x>>8) == '\n' {
			n = 1
		} else if n = decSpan(x); n == 0 || a[i+n] != '\n' {
			break
		}
		n &= 7
		out = out[:n0+o]
		rest = rest[i+n+1:]
		lines++
	}
	return len(data) - len(rest), lines, out
}

// decSpan returns the number of decimal digits at the start of x (its
// first byte the low one), 0 to 7: eight digits count as 7, and the
// byte after the seventh, a digit, is then refused by every caller as
// the field's end. (With the bit 1<<63 set, the trailing zeros are
// counted by one instruction, without the case of no bit set, and the
// compiler knows the result is below 8.)
func decSpan(x uint64) int {
	return bits.TrailingZeros64(nonDigitMask(x)|1<<63) >> 3
}

// hexRun returns the number of hex digits before the first byte marked
// in m, a nonHexMask that is not 0 (0 to 7; for m == 0, 7).
func hexRun(m uint64) int {
	return bits.TrailingZeros64(m|1<<63) >> 3
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
