package ndjson

import (
	"encoding/binary"
	"math"
	"slices"
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

// AppendInt1000 appends v*1000 in decimal: the bytes AppendInt1000
// writes.
func (c *Seconds) AppendInt1000(b []byte, v int64) []byte {
	if v < 1000000 || v > math.MaxInt64/1000 {
		return AppendInt1000(b, v)
	}
	u := uint64(v)
	s := u / 1000000
	if c.n == 0 || s != c.sec {
		var d [24]byte
		c.n = len(AppendUint(d[:0], s))
		c.pre[0], c.pre[1] = binary.LittleEndian.Uint64(d[:]), binary.LittleEndian.Uint64(d[8:])
		c.sec = s
	}
	// One capacity check; then the seconds' digits (two words cut to
	// their length), the six digits of the microseconds (Digits8's eight
	// less two leading zeros) and "000": at most 16+9 bytes.
	n := len(b)
	if cap(b)-n < 32 {
		b = slices.Grow(b, 32)
	}
	d := b[n : n+32]
	binary.LittleEndian.PutUint64(d, c.pre[0])
	binary.LittleEndian.PutUint64(d[8:], c.pre[1])
	d = d[c.n&15:]
	binary.LittleEndian.PutUint64(d, Digits8(uint32(u-s*1000000))>>16|'0'<<48|'0'<<56)
	d[8] = '0'
	return b[:n+c.n+9]
}
