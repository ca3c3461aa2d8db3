package mmiotrace

import (
	"math/bits"
)

// rwFastLen is how many bytes from the start of a line parseRWFast needs
// in the buffer. It reads at most the first 92 (the longest line it
// accepts is 86 bytes with the newline; word loads reach past it), but
// every index it uses is masked to 0..127 so that the compiler can drop
// the bounds checks: the array it reads through must hold 127+8 bytes.
// Callers with less left in the buffer use parseRWFields.
const rwFastLen = 136

// rwWindow is the part of the buffer parseRWFast reads.
type rwWindow = [rwFastLen]byte

// le64 loads the eight bytes at a[i:], the first in the low byte. i is
// always below 92 (see rwFastLen): the mask changes nothing but lets the
// compiler prove the load in bounds.
func le64(a *rwWindow, i int) uint64 {
	i &= 127
	return uint64(a[i]) | uint64(a[i+1])<<8 | uint64(a[i+2])<<16 | uint64(a[i+3])<<24 |
		uint64(a[i+4])<<32 | uint64(a[i+5])<<40 | uint64(a[i+6])<<48 | uint64(a[i+7])<<56
}

// le16 loads the two bytes at a[i:] as le64 does.
func le16(a *rwWindow, i int) uint16 {
	i &= 127
	return uint16(a[i]) | uint16(a[i+1])<<8
}

// at returns a[i] (i below 92, masked as in le64).
func at(a *rwWindow, i int) byte { return a[i&127] }

// parseRWFast parses an R/W line of the kernel's fixed shape, "R|W <w>
// <sec>.<6 digits> <id> 0x<hex> 0x<hex> 0x<hex> <pid>\n" (1 to 7 digits
// of seconds, map id and PID without sign and of at most 7 digits, 1 to
// 16 digits or lower-case hex letters per hex field), with word-at-a-time
// checks and conversions. It returns the index of the newline and true,
// filling r exactly as parseRWFields would; false means "not this shape",
// not "bad line": the caller then parses the line with parseRWFields,
// which accepts a superset (upper-case hex, other timestamp forms, signs,
// long numbers) and names the bad field. It sets r.Kind (KindRead or
// KindWrite), r.Line (the line without its newline) and r.Text (nil).
//
// With conv false it checks every field just as strictly but converts
// only those a filter without value or time criteria looks at (Kind,
// Width, MapID, Phys); Time, Value, PC, PID, Line and Text are left as
// they were.
//
// Field by field, the farthest it reads: width b[2:4]; seconds word at 4
// (at most 7 digits, so '.' at 11 or before); microseconds word at 11 or
// before; map id word at 19 or before (at most 7 digits and a space);
// each hex field "0x", a word, a second word and the byte after it, 19
// bytes from its start, the next field at most 19 bytes on (27, 46, 65,
// 84); the PID word at 84 or before: bytes 0..91.
func parseRWFast(b []byte, r *Record, conv bool) (int, bool) {
	if len(b) < rwFastLen {
		return 0, false
	}
	a := (*rwWindow)(b)
	kind := KindRead
	switch a[0] {
	case 'R':
	case 'W':
		kind = KindWrite
	default:
		return 0, false
	}
	// Width: one of the digits 1, 2, 4, 8, then a space.
	w := a[2] - '0'
	if a[1] != ' ' || w > 8 || (0x116>>w)&1 == 0 || a[3] != ' ' {
		return 0, false
	}
	// Seconds: 1 to 7 digits, then '.'.
	x := le64(a, 4)
	n := bits.TrailingZeros64(nonDigitMask(x)) >> 3 // digits before the first non-digit
	if n == 0 || n == 8 || byte(x>>(8*n)) != '.' {
		return 0, false
	}
	// ".dddddd " (the kernel's %06lu microseconds), read as one word.
	i := 4 + n
	us := le64(a, i)
	if byte(us) != '.' || byte(us>>56) != ' ' || nonDigitMask(us)&0x0080808080808000 != 0 {
		return 0, false
	}
	// The fields are stored as they are parsed (fewer values to keep
	// across the calls below); on failure the caller parses the line
	// again and overwrites them.
	r.Kind, r.Width = kind, w
	if conv {
		r.Text = nil
		r.Time = Timestamp{NS: dec8(x<<(64-8*n))*1e9 + dec8(us<<8&0xffffffffffff0000)*1000, Digits: 6}
	}
	// Map id: unsigned decimal, then a space.
	// (The word is loaded first: testing single bytes first would stop
	// the compiler from combining the word's byte loads.)
	i += 8
	x = le64(a, i)
	if c := byte(x) - '0'; c <= 9 && byte(x>>8) == ' ' {
		r.MapID = int32(c)
		i += 2
	} else {
		n = bits.TrailingZeros64(nonDigitMask(x)) >> 3
		if n == 0 || n == 8 || byte(x>>(8*n)) != ' ' {
			return 0, false
		}
		r.MapID = int32(dec8(x << (64 - 8*n)))
		i += n + 1
	}
	// The physical address: 8 digits (a 32-bit BAR) here, else the call.
	var v uint64
	if x, y := le64(a, i+2), le64(a, i+10); le16(a, i) == 'x'<<8|'0' && nonHexMask(x) == 0 && byte(y) == ' ' {
		r.Phys = hexWordMul(x)
		i += 11
	} else if r.Phys, i = hex0xSpFast(a, i, true); i == 0 {
		return 0, false
	}
	// The value: 8 digits here, else the call.
	if x, y := le64(a, i+2), le64(a, i+10); le16(a, i) == 'x'<<8|'0' && nonHexMask(x) == 0 && byte(y) == ' ' {
		if conv {
			r.Value = hexWordMul(x)
		}
		i += 11
	} else if v, i = hex0xSpFast(a, i, conv); i == 0 {
		return 0, false
	} else if conv {
		r.Value = v
	}
	// The PC: 16 digits (kernel text) here, else the call.
	if x, y := le64(a, i+2), le64(a, i+10); le16(a, i) == 'x'<<8|'0' && nonHexMask(x)|nonHexMask(y) == 0 && at(a, i+18) == ' ' {
		if conv {
			r.PC = hexWordMul(x)<<32 | hexWordMul(y)
		}
		i += 19
	} else if v, i = hex0xSpFast(a, i, conv); i == 0 {
		return 0, false
	} else if conv {
		r.PC = v
	}
	// PID: unsigned decimal, then the newline.
	x = le64(a, i)
	if c := byte(x) - '0'; c <= 9 && byte(x>>8) == '\n' {
		if conv {
			r.PID = int32(c)
			r.Line = b[:i+1]
		}
		return i + 1, true
	}
	n = bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || byte(x>>(8*n)) != '\n' {
		return 0, false
	}
	if conv {
		r.PID = int32(dec8(x << (64 - 8*n)))
		r.Line = b[:i+n]
	}
	return i + n, true
}

// nonDigitMask returns 0x80 in each byte of x that is not an ASCII digit,
// 0 in the others. A byte >= 0x80 may carry into the bytes above it, but
// it is itself marked, so the lowest marked byte is always right.
//
// Per byte b below 0x80, the high bit of b+(0x80-lo) is set iff b >= lo
// and no carry leaves the byte. b is a digit iff it passes the threshold
// '0' but not the one above '9': exactly one of the two high bits is set.
func nonDigitMask(x uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	digit := (x + (0x80-'0')*ones) ^ (x + (0x7f-'9')*ones)
	return (^digit | x) & high
}

// nonHexMask is nonDigitMask for digits and lower-case hex letters. The
// thresholds '0', '9'+1, 'a', 'f'+1 are in increasing order, so b is in
// one of the two ranges iff it passes an odd number of them.
func nonHexMask(x uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	in := (x + (0x80-'0')*ones) ^ (x + (0x7f-'9')*ones) ^ (x + (0x80-'a')*ones) ^ (x + (0x7f-'f')*ones)
	return (^in | x) & high
}

// dec8 converts eight bytes that are ASCII digits or zero bytes (leading
// zeros), the first in the low byte, to their decimal value.
func dec8(x uint64) uint64 {
	x &= 0x0f0f0f0f0f0f0f0f
	x = x * (1 + 10<<8) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (1 + 100<<16) >> 16
	return (x & 0x0000ffff0000ffff) * (1 + 10000<<32) >> 32
}

// hex0xSpFast parses "0x", 1 to 16 digits or lower-case hex letters and a
// space at a[i:] and returns the value (0 unless conv) and the index
// after the space, or 0 for anything else. It reads a[i:i+19].
func hex0xSpFast(a *rwWindow, i int, conv bool) (uint64, int) {
	if le16(a, i) != 'x'<<8|'0' {
		return 0, 0
	}
	j := i + 2
	x := le64(a, j)
	if m := nonHexMask(x); m != 0 { // 1 to 7 digits
		n := bits.TrailingZeros64(m) >> 3
		if n == 0 || byte(x>>(8*n)) != ' ' {
			return 0, 0
		}
		if !conv {
			return 0, j + n + 1
		}
		return hexWordMul(x << (64 - 8*n)), j + n + 1
	}
	y := le64(a, j+8)
	if byte(y) == ' ' { // 8 digits: 32-bit addresses and values
		if !conv {
			return 0, j + 9
		}
		return hexWordMul(x), j + 9
	}
	m := nonHexMask(y)
	if m == 0 { // 16 digits: kernel text addresses, 64-bit values
		if at(a, j+16) != ' ' {
			return 0, 0
		}
		if !conv {
			return 0, j + 17
		}
		return hexWordMul(x)<<32 | hexWordMul(y), j + 17
	}
	n := bits.TrailingZeros64(m) >> 3 // 9 to 15 digits (n = 0 fails below)
	if byte(y>>(8*n)) != ' ' {
		return 0, 0
	}
	if !conv {
		return 0, j + 8 + n + 1
	}
	return hexWordMul(x)<<(4*n) | hexWordMul(y<<(64-8*n)), j + 8 + n + 1
}

// hexWordMul converts eight digits or lower-case hex letters, the first
// in the low byte (zero bytes count as leading zeros), to their value:
// digit values per byte, then pairs, quadruples and the eight digits
// gathered by multiplications (no partial sum overflows its lane).
func hexWordMul(x uint64) uint64 {
	v := x&0x0f0f0f0f0f0f0f0f + (x>>6)&0x0101010101010101*9
	v = v * (1 + 16<<8) >> 8 & 0x00ff00ff00ff00ff
	v = v * (1 + 1<<24) >> 16 & 0x0000ffff0000ffff
	return v * (1 + 1<<48) >> 32
}
