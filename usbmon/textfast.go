package usbmon

// A fast parser for text lines exactly as the kernel prints them
// (mon_text.c: one space between words, 8 or 16 digit URB tags, at most
// 32 data bytes in whole 4-byte words but the last). It reads the line 8
// bytes at a time and answers only when it is sure; on anything else it
// reports false and the reader parses the line with parseTextLine, which
// accepts more and words the errors. FuzzTextFastLine checks that both
// agree on every line the fast parser accepts.

import (
	"encoding/binary"
	"math/bits"
)

const (
	// fastPad is how many bytes past the end of the line the fast parser
	// may read (it never looks at their values).
	fastPad = 16
	// fastMaxLine is the longest line the fast parser takes.
	fastMaxLine = 256
	// fastMaxData is the most data bytes the fast parser takes (the
	// kernel prints at most 32).
	fastMaxData = 32
)

// swarDigits returns how many of the 8 bytes of x (b[0] in the low byte)
// are decimal digits before the first other byte (0..8), and x with the
// digits turned into their values.
func swarDigits(x uint64) (int, uint64) {
	d := x ^ 0x30*swarOnes // digits become 0..9, everything else not
	// Bit 7 of a byte is set when the byte is not 0..9: the low 7 bits
	// plus 0x76 reach 0x80 from 10 up (no carry out: at most 0xf5).
	m := (d&(0x7f*swarOnes) + 0x76*swarOnes | d) & swarHigh
	return bits.TrailingZeros64(m) >> 3, d
}

// swarDecValue is the value of the first n (1..8) digit values of d, as
// returned by swarDigits, the first the most significant.
func swarDecValue(d uint64, n int) uint64 {
	d <<= (64 - 8*uint(n)) & 63 // drop the rest, the digits move up (n = 0: unused)
	d = (d*10 + d>>8) & 0x00ff00ff00ff00ff
	d = (d*100 + d>>16) & 0x0000ffff0000ffff
	return (d*10000 + d>>32) & 0xffffffff
}

// swarHexBytes is the 4 bytes that 8 hex digits (checked by swarHex)
// stand for, in their order (the first in the low byte).
func swarHexBytes(x uint64) uint32 {
	n := x&(0x0f*swarOnes) + (x>>6)&swarOnes*9
	n = (n<<4 | n>>8) & 0x00ff00ff00ff00ff // byte 2i holds digits 2i, 2i+1
	n = (n | n>>8) & 0x0000ffff0000ffff
	return uint32(n | n>>16)
}

// le64 reads 8 bytes, the first in the low byte.
func le64(b []byte, p int) uint64 { return binary.LittleEndian.Uint64(b[p:]) }

// xferLetter maps the transfer letter of an address word to its type
// (0xff: not one).
var xferLetter = [256]byte{'Z': byte(Isochronous), 'I': byte(Interrupt), 'C': byte(Control), 'B': byte(Bulk)}

func init() {
	for i := range xferLetter {
		if i != 'Z' && i != 'I' && i != 'C' && i != 'B' {
			xferLetter[i] = 0xff
		}
	}
}

// parseTextFast parses the line b[:n] into ev when it is in the kernel's
// exact form and reports whether it did; otherwise it leaves ev alone.
// len(b) must be at least n+fastPad: the bytes past n are read but never
// decide anything. data and iso are the buffers ev.Data and ev.ISO get
// (empty; ev.Data filled with up to fastMaxData bytes).
//
// Each number is read 8 bytes at a time: its digits counted and valued
// with swarDigits/swarDecValue, the byte after them checked to be the
// separator the kernel prints, inside the line (so digits past n never
// count).
func parseTextFast(b []byte, n int, f Format, ev *Event, data []byte, iso []ISODesc) bool {
	if n < 24 || n > fastMaxLine || len(b) < n+fastPad || cap(data) < fastMaxData+4 {
		return false
	}
	// URB tag: 16 hex digits (64-bit kernels) or 8.
	var id uint64
	p := 17
	hi, lo := le64(b, 0), le64(b, 8)
	if b[16] == ' ' && swarHex(hi) && swarHex(lo) {
		id = uint64(swarHexValue(hi))<<32 | uint64(swarHexValue(lo))
	} else if b[8] == ' ' && swarHex(hi) {
		id, p = uint64(swarHexValue(hi)), 9
	} else {
		return false
	}
	// Timestamp: 1 to 10 digits.
	k, d := swarDigits(le64(b, p))
	ts := swarDecValue(d, k)
	if k == 8 {
		switch k2, d2 := swarDigits(le64(b, p+8)); k2 {
		case 0:
		case 1, 2:
			ts = ts*pow10[k2] + swarDecValue(d2, k2)
			k += k2
		default:
			return false
		}
	}
	p += k
	// " S Bo:": type, transfer letter, direction.
	if k == 0 || ts > 1<<32-1 || p+6 >= n || b[p] != ' ' || b[p+2] != ' ' || b[p+5] != ':' {
		return false
	}
	typ := EventType(b[p+1])
	tt := xferLetter[b[p+3]]
	in := b[p+4] == 'i'
	if typ != Submission && typ != Callback && typ != SubmitError || tt == 0xff || !in && b[p+4] != 'o' {
		return false
	}
	p += 6
	fields := HasTextStamp
	var bus uint64
	if f == Format1u {
		k, d = swarDigits(le64(b, p))
		bus = swarDecValue(d, k)
		p += k
		if k == 0 || bus > 1<<16-1 || p >= n || b[p] != ':' {
			return false
		}
		p++
		fields |= HasBus
	} else if f != Format1t {
		return false
	}
	k, d = swarDigits(le64(b, p))
	dev := swarDecValue(d, k)
	p += k
	if k == 0 || dev > 255 || p+1 >= n || b[p] != ':' {
		return false
	}
	k, d = swarDigits(le64(b, p+1))
	ep := swarDecValue(d, k)
	p += 1 + k
	if k == 0 || ep > 127 || p+1 >= n || b[p] != ' ' {
		return false
	}
	p++
	// Status word (p < n).
	var status, interval int32
	setupFlag := SetupNone
	var setup [8]byte
	switch {
	case f == Format1u && typ != SubmitError && TransferType(tt) == Isochronous:
		return false // rare: the general parser
	case f == Format1u && typ != SubmitError && TransferType(tt) == Interrupt:
		fields |= HasTextExt
		if status, p = intAt(b, p, n, ':'); p < 0 {
			return false
		}
		if interval, p = intAt(b, p+1, n, ' '); p < 0 {
			return false
		}
	case b[p] == 's' && b[p+1] == ' ':
		// s 80 06 0100 0000 0040: the five setup fields, as two words
		// of 8 hex digits: wValue wIndex, then wLength bRequestType bRequest.
		if p+22 >= n || b[p+4] != ' ' || b[p+7] != ' ' || b[p+12] != ' ' || b[p+17] != ' ' || b[p+22] != ' ' {
			return false
		}
		x := uint64(binary.LittleEndian.Uint32(b[p+8:])) | uint64(binary.LittleEndian.Uint32(b[p+13:]))<<32
		y := uint64(binary.LittleEndian.Uint32(b[p+18:])) | uint64(binary.LittleEndian.Uint16(b[p+2:]))<<32 |
			uint64(binary.LittleEndian.Uint16(b[p+5:]))<<48
		if !swarHex(x) || !swarHex(y) {
			return false
		}
		vi, lr := swarHexValue(x), swarHexValue(y)
		setup = [8]byte{byte(lr >> 8), byte(lr), byte(vi >> 16), byte(vi >> 24), byte(vi), byte(vi >> 8), byte(lr >> 16), byte(lr >> 24)}
		setupFlag = SetupPresent
		status = -115
		p += 22
	default:
		if status, p = intAt(b, p, n, ' '); p < 0 {
			return false
		}
	}
	// Data length (b[p] is the space before it), then the end of the
	// line, a data tag, or '=' and the data words.
	k, d = swarDigits(le64(b, p+1))
	k = min(k, n-p-1) // the last word of the line: digits past n do not count
	length := swarDecValue(d, k)
	p += 1 + k
	if k == 0 || p < n && b[p] != ' ' {
		return false // also a length of more than 8 digits
	}
	dataFlag := byte('L')
	if typ == SubmitError {
		dataFlag = 'E'
	}
	nd := 0
	switch {
	case p == n:
		if length > 0 {
			return false // missing data tag
		}
	case p+1 >= n || length == 0:
		return false
	case b[p+1] != '=':
		dataFlag = b[p+1]
		if p+2 != n || dataFlag <= ' ' || dataFlag >= 0x7f {
			return false
		}
	default:
		// Words of 8 digits, each after one space; the last one may have
		// 2, 4 or 6.
		dataFlag = DataPresent
		dd := data[:fastMaxData+4]
		for p += 2; p+9 <= n; p += 9 {
			x := le64(b, p+1)
			if b[p] != ' ' || !swarHex(x) || nd == fastMaxData {
				return false
			}
			binary.LittleEndian.PutUint32(dd[nd:], swarHexBytes(x))
			nd += 4
		}
		if r := n - p; r > 0 {
			// Digits past the end of the line are replaced by '0'.
			keep := uint64(1)<<(8*(r-1)) - 1
			x := le64(b, p+1)&keep | 0x30*swarOnes&^keep
			if r&1 == 0 || b[p] != ' ' || !swarHex(x) || nd+r/2 > fastMaxData {
				return false
			}
			binary.LittleEndian.PutUint32(dd[nd:], swarHexBytes(x))
			nd += r / 2
		}
	}
	*ev = Event{
		ID:        id,
		Type:      typ,
		Transfer:  TransferType(tt),
		In:        in,
		Bus:       uint16(bus),
		Device:    uint8(dev),
		Endpoint:  uint8(ep),
		Status:    status,
		SetupFlag: setupFlag,
		Setup:     setup,
		Interval:  interval,
		ISO:       iso[:0],
		Length:    uint32(length),
		DataFlag:  dataFlag,
		Data:      data[:nd],
		TextStamp: uint32(ts),
		Fields:    fields,
		Format:    f,
	}
	return true
}

// intAt parses a signed decimal of 1 to 7 digits at b[p:] followed by the
// byte sep (before n). It returns the value and the position of sep, or
// -1.
func intAt(b []byte, p, n int, sep byte) (int32, int) {
	neg := b[p] == '-'
	if neg {
		p++
	}
	k, d := swarDigits(le64(b, p))
	v := int32(swarDecValue(d, k))
	p += k
	if k == 0 || k > 7 || p >= n || b[p] != sep {
		return 0, -1
	}
	if neg {
		v = -v
	}
	return v, p
}

var pow10 = [...]uint64{1, 10, 100}
