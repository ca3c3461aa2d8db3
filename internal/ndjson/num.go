package ndjson

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// The number and hex appenders below write the bytes strconv and
// encoding/hex write (TestAppendNumbersMatchStrconv,
// FuzzAppendNumbers), with less work per call: they were half of the CPU
// of 'iotap usb read --json' (docs/performance.md).

// AppendUint appends v in decimal, as strconv.AppendUint(b, v, 10) does:
// eight digits at a time (Digits8), written as one word and cut to the
// number's length, so that the 19-digit nanosecond stamps of the NDJSON
// records take three word stores instead of ten divisions.
// One digit is written inline (most numbers of a record are small: bus,
// device, endpoint, status); up to four digits are taken two at a time
// from a table (lengths, latencies, seconds).
func AppendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	return appendUint(b, v)
}

func appendUint(b []byte, v uint64) []byte {
	if v < 100 { // endpoints, lengths, seconds: two digits, no word
		return append(b, byte('0'+v/10), byte('0'+v%10))
	}
	if v < 10000 { // lengths, latencies, seconds: two digits at a time
		hi, lo := v/100, v%100
		if hi < 10 {
			return append(b, byte('0'+hi), digitPairs[2*lo], digitPairs[2*lo+1])
		}
		return append(b, digitPairs[2*hi], digitPairs[2*hi+1], digitPairs[2*lo], digitPairs[2*lo+1])
	}
	if v >= 1e8 {
		hi := v / 1e8
		if hi < 10 {
			b = append(b, byte('0'+hi))
		} else {
			b = appendUint(b, hi)
		}
		return binary.LittleEndian.AppendUint64(b, Digits8(uint32(v-hi*1e8)))
	}
	n := DecLen(v)
	b = binary.LittleEndian.AppendUint64(b, Digits8(uint32(v))>>(8*(8-n)))
	return b[:len(b)-8+n]
}

// PutUint writes v in decimal at w[i:], the digits AppendUint appends,
// and returns the index after them: for a caller that bounded a line's
// length first and writes it in place. It may write up to 8 bytes past
// the digits' end (word stores): w must have room for 20 digits and 8
// bytes after w[i].
func PutUint(w []byte, i int, v uint64) int {
	if v < 10 { // inlined: bus, endpoint, seconds
		w[i] = byte('0' + v)
		return i + 1
	}
	return putUint(w, i, v)
}

func putUint(w []byte, i int, v uint64) int {
	if v < 100 {
		w[i], w[i+1] = digitPairs[2*v], digitPairs[2*v+1]
		return i + 2
	}
	if v < 10000 {
		hi, lo := v/100, v%100
		if hi < 10 {
			w[i], w[i+1], w[i+2] = byte('0'+hi), digitPairs[2*lo], digitPairs[2*lo+1]
			return i + 3
		}
		w[i], w[i+1], w[i+2], w[i+3] = digitPairs[2*hi], digitPairs[2*hi+1], digitPairs[2*lo], digitPairs[2*lo+1]
		return i + 4
	}
	if v >= 1e8 {
		hi := v / 1e8
		i = PutUint(w, i, hi)
		binary.LittleEndian.PutUint64(w[i:], Digits8(uint32(v-hi*1e8)))
		return i + 8
	}
	n := DecLen(v)
	binary.LittleEndian.PutUint64(w[i:], Digits8(uint32(v))>>(8*(8-n)))
	return i + n
}

// digitPairs holds the two digits of 00 to 99.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// Digits8 returns the eight decimal digits of x < 1e8, with leading
// zeros, as the bytes of a little-endian word (the first digit in the low
// byte): x split into halves of four digits in 32-bit lanes, each into
// two of two digits in 16-bit lanes, each into digits in bytes, with
// multiplications that stay inside their lane.
func Digits8(x uint32) uint64 {
	v := uint64(x/10000) | uint64(x%10000)<<32
	q := ((v * 10486) >> 20) & 0x0000007f0000007f // n/100 of n < 10000
	v = q | (v-q*100)<<16
	q = ((v * 103) >> 10) & 0x000f000f000f000f // n/10 of n < 100
	v = q | (v-q*10)<<8
	return v + 0x3030303030303030
}

var pow10u64 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// DecLen returns the number of decimal digits of v.
func DecLen(v uint64) int {
	// log10(2) ~ 1233/4096; the estimate is exact or one short.
	t := (bits.Len64(v|1) * 1233) >> 12
	if v >= pow10u64[t] {
		t++
	}
	return max(t, 1)
}

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does.
func AppendInt(b []byte, v int64) []byte {
	if v < 0 {
		return AppendUint(append(b, '-'), uint64(-v)) // -MinInt64 wraps to its magnitude
	}
	return AppendUint(b, uint64(v))
}

// AppendInt1000 appends v*1000 in decimal, as AppendInt(b, v*1000) does
// (also where v*1000 overflows): v's digits and "000", so that a
// timestamp in microseconds written as nanoseconds takes two groups of
// eight digits instead of three.
func AppendInt1000(b []byte, v int64) []byte {
	if v == 0 || v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
		return AppendInt(b, v*1000)
	}
	return append(AppendInt(b, v), "000"...)
}

// AppendHex appends p in lower-case hex, as hex.AppendEncode does.
func AppendHex(b, p []byte) []byte {
	n := len(b)
	b = slices.Grow(b, 2*len(p))[:n+2*len(p)]
	dst := b[n:]
	if k := len(p) / 16; haveHexBlocks && k > 0 {
		// Sixteen bytes at a time with SSE2 on amd64 (hex_amd64.s):
		// the payloads of 'usb read --json' are most of its output.
		hexBlocks(&dst[0], &p[0], k)
		p, dst = p[16*k:], dst[32*k:]
	}
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
// strconv.AppendUint(b, v, 16) does: each half of v as one word of eight
// digits (spread, ascii), shifted to drop the leading zeros.
func AppendHexUint64(b []byte, v uint64) []byte {
	n := max((bits.Len64(v)+3)/4, 1)
	if n > 8 {
		m := n - 8
		b = binary.BigEndian.AppendUint64(b, ascii(spread(uint32(v>>32)))<<(8*(8-m)))
		b = b[:len(b)-8+m]
		return binary.BigEndian.AppendUint64(b, ascii(spread(uint32(v))))
	}
	b = binary.BigEndian.AppendUint64(b, ascii(spread(uint32(v)))<<(8*(8-n)))
	return b[:len(b)-8+n]
}

// PutHex16 writes the lower-case hex of the 16 bytes p to dst, the 32
// bytes AppendHex(nil, p[:]) returns, into a fixed place (a caller
// writing a line whose length it bounded first).
func PutHex16(dst *[32]byte, p *[16]byte) {
	if haveHexBlocks {
		hexBlocks(&dst[0], &p[0], 1)
		return
	}
	h0, l0 := HexWords(binary.BigEndian.Uint64(p[:8]))
	h1, l1 := HexWords(binary.BigEndian.Uint64(p[8:]))
	binary.BigEndian.PutUint64(dst[0:], h0)
	binary.BigEndian.PutUint64(dst[8:], l0)
	binary.BigEndian.PutUint64(dst[16:], h1)
	binary.BigEndian.PutUint64(dst[24:], l1)
}

// HexWords returns the 16 lower-case hex digits of x as two big-endian
// words (the digits of x's high half, then of its low half): the bytes of
// AppendHex of x's eight big-endian bytes.
func HexWords(x uint64) (hi, lo uint64) {
	return ascii(spread(uint32(x >> 32))), ascii(spread(uint32(x)))
}

// DigitPair returns the two decimal digits of v < 100 as a little-endian
// 16-bit word (the tens digit in the low byte).
func DigitPair(v uint32) uint16 {
	return uint16(digitPairs[2*v]) | uint16(digitPairs[2*v+1])<<8
}

// Hex4 returns the eight lower-case hex digits of x as a big-endian word
// (the bytes AppendHex writes for x's four big-endian bytes).
func Hex4(x uint32) uint64 { return ascii(spread(x)) }
