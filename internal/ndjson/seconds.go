package ndjson

import (
	"encoding/binary"
	"math"
)

// Seconds writes microsecond counts whose whole seconds repeat from one
// call to the next (the time stamps of consecutive events): it keeps the
// digits of the last whole seconds and writes only the six digits of the
// microseconds anew (one Digits8) instead of the whole number. The zero
// value is ready to use; a Seconds serves one column (one for ts_ns, one
// for rel_ns), else the seconds change at every call. (Where the
// seconds have a digit or three, as in the time column of usb read,
// AppendUint costs less: callgrind.)
type Seconds struct {
	sec uint64    // the whole seconds whose digits pre holds
	pre [2]uint64 // their digits as the bytes of two little-endian words
	n   int       // how many; 0: none cached
}

// appendSec appends the decimal digits of s, from the cache when s is the
// last whole seconds asked for: two word stores cut to their length.
func (c *Seconds) appendSec(b []byte, s uint64) []byte {
	if c.n == 0 || s != c.sec {
		var d [24]byte
		c.n = len(AppendUint(d[:0], s))
		c.pre[0], c.pre[1] = binary.LittleEndian.Uint64(d[:]), binary.LittleEndian.Uint64(d[8:])
		c.sec = s
	}
	b = binary.LittleEndian.AppendUint64(b, c.pre[0])
	b = binary.LittleEndian.AppendUint64(b, c.pre[1])
	return b[:len(b)-16+c.n]
}

// AppendInt1000 appends v*1000 in decimal: the bytes AppendInt1000
// writes.
func (c *Seconds) AppendInt1000(b []byte, v int64) []byte {
	if v < 1000000 || v > math.MaxInt64/1000 {
		return AppendInt1000(b, v)
	}
	u := uint64(v)
	s := u / 1000000
	b = c.appendSec(b, s)
	// The six digits of the microseconds (Digits8's eight less two
	// leading zeros) and "000" after them: nine bytes.
	f := Digits8(uint32(u - s*1000000))
	b = binary.LittleEndian.AppendUint64(b, f>>16|'0'<<48|'0'<<56)
	return append(b, '0')
}
