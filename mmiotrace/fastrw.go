package mmiotrace

import (
	"encoding/binary"
	"math/bits"
)

// rwFastLen is how many bytes parseRWFast may read from the start of a
// line (the longest line it accepts, 92 bytes with the newline, plus the
// word loads past the last field). Callers with less left in the buffer
// use parseRWFields.
const rwFastLen = 96

// parseRWFast parses an R/W line of the kernel's fixed shape, "R|W <w>
// <sec>.<6 digits> <id> 0x<hex> 0x<hex> 0x<hex> <pid>\n" (1 to 7 digits
// of seconds, map id and PID without sign and of at most 7 digits, 1 to
// 16 digits or lower-case hex letters per hex field), with word-at-a-time
// checks and conversions. It returns the index of the newline and true,
// filling r exactly as parseRWFields would; false means "not this shape",
// not "bad line": the caller then parses the line with parseRWFields,
// which accepts a superset (upper-case hex, other timestamp forms, signs,
// long numbers) and names the bad field. len(b) must be at least
// rwFastLen; b[0:2] is not looked at.
func parseRWFast(b []byte, r *Record) (int, bool) {
	if len(b) < rwFastLen {
		return 0, false
	}
	// Width: one of the digits 1, 2, 4, 8, then a space.
	w := b[2] - '0'
	if w > 8 || (0x116>>w)&1 == 0 || b[3] != ' ' {
		return 0, false
	}
	// Seconds: 1 to 7 digits, then '.'.
	x := binary.LittleEndian.Uint64(b[4:])
	m := nonDigitMask(x)
	n := bits.TrailingZeros64(m) >> 3 // digits before the first non-digit
	if n == 0 || n == 8 || byte(x>>(8*n)) != '.' {
		return 0, false
	}
	sec := dec8(x << (64 - 8*n))
	// ".dddddd " (the kernel's %06lu microseconds), read as one word.
	i := 4 + n
	x = binary.LittleEndian.Uint64(b[i:])
	if byte(x) != '.' || byte(x>>56) != ' ' || nonDigitMask(x)&0x0080808080808000 != 0 {
		return 0, false
	}
	us := dec8(x << 8 & 0xffffffffffff0000)
	// Map id: unsigned decimal, then a space.
	id, i, ok := decSpFast(b, i+8, ' ')
	if !ok {
		return 0, false
	}
	phys, i, ok := hex0xSpFast(b, i)
	if !ok {
		return 0, false
	}
	val, i, ok := hex0xSpFast(b, i)
	if !ok {
		return 0, false
	}
	pc, i, ok := hex0xSpFast(b, i)
	if !ok {
		return 0, false
	}
	pid, i, ok := decSpFast(b, i, '\n')
	if !ok {
		return 0, false
	}
	r.Width = w
	r.Time = Timestamp{NS: sec*1e9 + us*1000, Digits: 6}
	r.MapID = int32(id)
	r.Phys, r.Value, r.PC = phys, val, pc
	r.PID = int32(pid)
	return i - 1, true
}

// nonDigitMask returns 0x80 in each byte of x that is not an ASCII digit,
// 0 in the others. A byte >= 0x80 may carry into the bytes above it, but
// it is itself marked, so the lowest marked byte is always right.
func nonDigitMask(x uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	digit := (x + (0x80-'0')*ones) &^ (x + (0x7f-'9')*ones)
	return (^digit | x) & high
}

// nonHexMask is nonDigitMask for digits and lower-case hex letters.
func nonHexMask(x uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	digit := (x + (0x80-'0')*ones) &^ (x + (0x7f-'9')*ones)
	lower := (x + (0x80-'a')*ones) &^ (x + (0x7f-'f')*ones)
	return (^(digit | lower) | x) & high
}

// dec8 converts eight bytes that are ASCII digits or zero bytes (leading
// zeros), the first in the low byte, to their decimal value.
func dec8(x uint64) uint64 {
	x &= 0x0f0f0f0f0f0f0f0f
	x = x * (1 + 10<<8) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (1 + 100<<16) >> 16
	return (x & 0x0000ffff0000ffff) * (1 + 10000<<32) >> 32
}

// decSpFast parses 1 to 7 decimal digits at b[i:] followed by the byte
// end and returns the value and the index after end. It reads b[i:i+8].
func decSpFast(b []byte, i int, end byte) (uint64, int, bool) {
	if c := b[i] - '0'; c <= 9 && b[i+1] == end { // map ids and PIDs
		return uint64(c), i + 2, true
	}
	x := binary.LittleEndian.Uint64(b[i:])
	n := bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || byte(x>>(8*n)) != end {
		return 0, i, false
	}
	return dec8(x << (64 - 8*n)), i + n + 1, true
}

// hex0xSpFast parses "0x", 1 to 16 digits or lower-case hex letters and a
// space at b[i:] and returns the value and the index after the space. It
// reads b[i:i+19].
func hex0xSpFast(b []byte, i int) (uint64, int, bool) {
	if binary.LittleEndian.Uint16(b[i:]) != 'x'<<8|'0' {
		return 0, i, false
	}
	j := i + 2
	x := binary.LittleEndian.Uint64(b[j:])
	if m := nonHexMask(x); m != 0 { // 1 to 7 digits
		n := bits.TrailingZeros64(m) >> 3
		if n == 0 || byte(x>>(8*n)) != ' ' {
			return 0, i, false
		}
		return hexWordMul(x << (64 - 8*n)), j + n + 1, true
	}
	if b[j+8] == ' ' { // 8 digits: 32-bit addresses and values
		return hexWordMul(x), j + 9, true
	}
	y := binary.LittleEndian.Uint64(b[j+8:])
	m := nonHexMask(y)
	if m == 0 { // 16 digits: kernel text addresses, 64-bit values
		if b[j+16] != ' ' {
			return 0, i, false
		}
		return hexWordMul(x)<<32 | hexWordMul(y), j + 17, true
	}
	n := bits.TrailingZeros64(m) >> 3 // 9 to 15 digits (n = 0 fails below)
	if byte(y>>(8*n)) != ' ' {
		return 0, i, false
	}
	return hexWordMul(x)<<(4*n) | hexWordMul(y<<(64-8*n)), j + 8 + n + 1, true
}

// hexWordMul is hexWord with the digits gathered by multiplications:
// digit values per byte, then pairs, quadruples and the eight digits
// combined in place (no partial sum overflows its lane).
func hexWordMul(x uint64) uint64 {
	v := x&0x0f0f0f0f0f0f0f0f + (x>>6)&0x0101010101010101*9
	v = v * (1 + 16<<8) >> 8 & 0x00ff00ff00ff00ff
	v = v * (1 + 1<<24) >> 16 & 0x0000ffff0000ffff
	return v * (1 + 1<<48) >> 32
}
