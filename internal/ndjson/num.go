package ndjson

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// The number and hex appenders below write the bytes strconv and
// encoding/hex write (TestAppendNumbersMatchStrconv,
// FuzzAppendNumbers), with less work per call: they were half of the CPU
// of 'iotap usb read --json' (docs/performance.md).

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// AppendUint appends v in decimal, as strconv.AppendUint(b, v, 10) does.
func AppendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	if v < 100 {
		return append(b, digitPairs[2*v], digitPairs[2*v+1])
	}
	var a [20]byte
	i := len(a)
	for v >= 100 {
		q := v / 100
		r := v - q*100
		i -= 2
		a[i], a[i+1] = digitPairs[2*r], digitPairs[2*r+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		a[i], a[i+1] = digitPairs[2*v], digitPairs[2*v+1]
	} else {
		i--
		a[i] = byte('0' + v)
	}
	return append(b, a[i:]...)
}

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does.
func AppendInt(b []byte, v int64) []byte {
	if v < 0 {
		return AppendUint(append(b, '-'), uint64(-v)) // -MinInt64 wraps to its magnitude
	}
	return AppendUint(b, uint64(v))
}

// AppendHex appends p in lower-case hex, as hex.AppendEncode does.
func AppendHex(b, p []byte) []byte {
	n := len(b)
	b = slices.Grow(b, 2*len(p))[:n+2*len(p)]
	dst := b[n:]
	for len(p) >= 8 {
		// Eight bytes at a time: spread the 16 nibbles one per byte,
		// then add '0' or 'a'-10 to each without a branch.
		x := binary.BigEndian.Uint64(p)
		hi := spread(uint32(x >> 32))
		lo := spread(uint32(x))
		binary.BigEndian.PutUint64(dst, ascii(hi))
		binary.BigEndian.PutUint64(dst[8:], ascii(lo))
		p, dst = p[8:], dst[16:]
	}
	for i, c := range p {
		dst[2*i], dst[2*i+1] = hexDigits[c>>4], hexDigits[c&15]
	}
	return b
}

// spread returns the eight nibbles of x, most significant first, one per
// byte of the result (most significant byte first).
func spread(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff0000ffff
	v = (v | v<<8) & 0x00ff00ff00ff00ff
	// Each byte now holds two nibbles (hi<<4 | lo) in 16-bit lanes:
	// split them into two bytes.
	return (v&0x00f000f000f000f0)<<4 | v&0x000f000f000f000f
}

// ascii turns eight nibble values (one per byte) into their hex digits.
func ascii(v uint64) uint64 {
	const ones = 0x0101010101010101
	// 0x76 + nibble has its high bit set exactly for nibbles >= 10.
	letters := ((v + 0x76*ones) & (0x80 * ones)) >> 7
	return v + '0'*ones + letters*('a'-'0'-10)
}

// AppendHexUint64 appends v in lower-case hex without leading zeros, as
// strconv.AppendUint(b, v, 16) does.
func AppendHexUint64(b []byte, v uint64) []byte {
	n := max((bits.Len64(v)+3)/4, 1)
	l := len(b)
	b = slices.Grow(b, n)[:l+n]
	dst := b[l:]
	for i := n - 1; i >= 0; i-- {
		dst[i] = hexDigits[v&15]
		v >>= 4
	}
	return b
}
