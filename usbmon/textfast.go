package usbmon

// A fast parser for text lines exactly as the kernel prints them
// (mon_text.c: one space between words, 8 or 16 digit URB tags, '\n' at
// the end, at most 32 data bytes in whole 4-byte words but the last). It
// parses the line in the reader's buffer, 8 bytes at a time, finds its end
// on the way (no separate search for '\n') and answers only when it is
// sure; on anything else it returns 0 and the reader parses the line with
// parseTextLine, which accepts more and words the errors.
// FuzzTextFastLine checks that both agree on every line the fast parser
// accepts.

import (
	"encoding/binary"
	"math/bits"
)

const (
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

// fastWindow is what the fast parser sees of the buffer: fastWindowLen
// bytes from the start of the line, and 8 more so that le64 reads 8 bytes
// anywhere. Positions are taken modulo fastWindowLen (no bounds checks);
// parseTextFast refuses lines whose end is too close to it for that to
// matter.
type fastWindow = [fastWindowLen + 8]byte

const fastWindowLen = 256

// at is the byte at position i of the window.
func at(a *fastWindow, i int) byte { return a[i&(fastWindowLen-1)] }

// le64 reads 8 bytes at position i of the window, the first in the low
// byte.
func le64(a *fastWindow, i int) uint64 {
	return binary.LittleEndian.Uint64(a[i&(fastWindowLen-1):])
}

// xferLetter maps the transfer letter of an address word to its type
// (0xff: not one). Read-only.
var xferLetter = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	t['Z'], t['I'], t['C'], t['B'] = byte(Isochronous), byte(Interrupt), byte(Control), byte(Bulk)
	return t
}()

// parseTextFast parses the line that starts at b[p0] when it is in the
// kernel's exact form and ends with '\n', and returns its length with the
// '\n'; otherwise it returns 0 and leaves ev alone. b must hold a 0 byte
// after the data (the reader's sentinel: the parser checks every byte it
// accepts against what the kernel prints there, a digit, a separator...,
// so it never accepts what follows) and len(fastWindow{}) bytes from p0
// on. data and iso are the buffers ev.Data and ev.ISO get (empty; ev.Data
// filled with up to fastMaxData bytes).
//
// Each number is read 8 bytes at a time: its digits counted and valued
// with swarDigits/swarDecValue, then the byte after them checked to be
// the separator the kernel prints.
func parseTextFast(b []byte, p0 int, f Format, ev *Event, data []byte, iso []ISODesc) int {
	if cap(data) < fastMaxData+4 || len(b)-p0 < len(fastWindow{}) {
		return 0
	}
	a := (*fastWindow)(b[p0 : p0+len(fastWindow{})])
	// URB tag: 16 hex digits (64-bit kernels) or 8.
	var id uint64
	p := 17
	hi, lo := le64(a, 0), le64(a, 8)
	if at(a, 16) == ' ' && swarHex(hi) && swarHex(lo) {
		id = uint64(swarHexValue(hi))<<32 | uint64(swarHexValue(lo))
	} else {
		// Fewer digits: %lx prints no leading zeros (and 32-bit kernels
		// have 8-digit tags).
		k := bits.TrailingZeros64(^swarHexMask(hi)&swarHigh) >> 3
		if k == 8 {
			k += bits.TrailingZeros64(^swarHexMask(lo)&swarHigh) >> 3
		}
		if k == 0 || k >= 16 || at(a, k) != ' ' {
			return 0
		}
		if k <= 8 { // the digits moved up, zero bytes (value 0) below
			id = uint64(swarHexValue(hi << ((64 - 8*uint(k)) & 63)))
		} else {
			id = uint64(swarHexValue(hi))<<(4*(k-8)) | uint64(swarHexValue(lo<<(8*(16-uint(k)))))
		}
		p = k + 1
	}
	// Timestamp: 1 to 10 digits.
	k, d := swarDigits(le64(a, p))
	ts := swarDecValue(d, k)
	if k == 8 {
		switch k2, d2 := swarDigits(le64(a, p+8)); k2 {
		case 0:
		case 1, 2:
			ts = ts*pow10[k2] + swarDecValue(d2, k2)
			k += k2
		default:
			return 0
		}
	}
	p += k
	// " S Bo:": type, transfer letter, direction.
	if k == 0 || ts > 1<<32-1 || at(a, p) != ' ' || at(a, p+2) != ' ' || at(a, p+5) != ':' {
		return 0
	}
	typ := EventType(at(a, p+1))
	tt := xferLetter[at(a, p+3)]
	in := at(a, p+4) == 'i'
	if typ != Submission && typ != Callback && typ != SubmitError || tt == 0xff || !in && at(a, p+4) != 'o' {
		return 0
	}
	p += 6
	fields := HasTextStamp
	var bus, dev, ep uint64
	// The usual 1u address, a one-digit bus, the device in three digits
	// and a one or two digit endpoint (1:002:2), is checked and valued as
	// one 8-byte word.
	const (
		colonMask  = 0x0000_ff00_0000_ff00 // bytes 1 and 5
		colons     = 0x0000_3a00_0000_3a00
		digitBytes = 0x0080_0080_8080_0080 // bytes 0, 2, 3, 4 and 6
	)
	w := le64(a, p)
	d = w ^ 0x30*swarOnes
	nonDigit := (d&(0x7f*swarOnes) + 0x76*swarOnes | d) & swarHigh
	if f == Format1u && w&colonMask == colons && nonDigit&digitBytes == 0 && (w>>56 == ' ' || nonDigit>>63 == 0 && at(a, p+8) == ' ') {
		bus = d & 0xff
		dev = (d>>16&0xff)*100 + (d>>24&0xff)*10 + d>>32&0xff
		ep = d >> 48 & 0xff
		p += 8
		if w>>56 != ' ' {
			ep = ep*10 + d>>56
			p++
		}
		if dev > 255 {
			return 0
		}
		fields |= HasBus
	} else {
		if f == Format1u {
			k, d = swarDigits(w)
			bus = swarDecValue(d, k)
			p += k
			if k == 0 || bus > 1<<16-1 || at(a, p) != ':' {
				return 0
			}
			p++
			fields |= HasBus
		} else if f != Format1t {
			return 0
		}
		k, d = swarDigits(le64(a, p))
		dev = swarDecValue(d, k)
		p += k
		if k == 0 || dev > 255 || at(a, p) != ':' {
			return 0
		}
		k, d = swarDigits(le64(a, p+1))
		ep = swarDecValue(d, k)
		p += 1 + k
		if k == 0 || ep > 127 || at(a, p) != ' ' {
			return 0
		}
		p++
	}
	// Status word.
	var status, interval int32
	setupFlag := SetupNone
	var setup [8]byte
	switch {
	case f == Format1u && typ != SubmitError && TransferType(tt) == Isochronous:
		return 0 // rare: the general parser
	case f == Format1u && typ != SubmitError && TransferType(tt) == Interrupt:
		fields |= HasTextExt
		if status, p = statusAt(a, p, ':'); p < 0 {
			return 0
		}
		if interval, p = intAt(a, p+1, ' '); p < 0 {
			return 0
		}
	case at(a, p) == 's' && at(a, p+1) == ' ':
		// s 80 06 0100 0000 0040: the five setup fields, as two words
		// of 8 hex digits: wValue wIndex, then wLength bRequestType bRequest.
		if at(a, p+4) != ' ' || at(a, p+7) != ' ' || at(a, p+12) != ' ' || at(a, p+17) != ' ' || at(a, p+22) != ' ' {
			return 0
		}
		x := le64(a, p+8)&0xffffffff | le64(a, p+13)<<32
		y := le64(a, p+18)&0xffffffff | le64(a, p+2)&0xffff<<32 | le64(a, p+5)<<48
		if !swarHex(x) || !swarHex(y) {
			return 0
		}
		vi, lr := swarHexValue(x), swarHexValue(y)
		setup = [8]byte{byte(lr >> 8), byte(lr), byte(vi >> 16), byte(vi >> 24), byte(vi), byte(vi >> 8), byte(lr >> 16), byte(lr >> 24)}
		setupFlag = SetupPresent
		status = -115
		p += 22
	default:
		if status, p = statusAt(a, p, ' '); p < 0 {
			return 0
		}
	}
	// Data length (at(a, p) is the space before it), then the end of the
	// line, a data tag, or '=' and the data words.
	k, d = swarDigits(le64(a, p+1))
	length := swarDecValue(d, k)
	p += 1 + k
	if k == 0 {
		return 0
	}
	dataFlag := byte('L')
	if typ == SubmitError {
		dataFlag = 'E'
	}
	nd := 0
	switch c := at(a, p+1); {
	case at(a, p) == '\n':
		if length > 0 {
			return 0 // missing data tag
		}
	case at(a, p) != ' ' || length == 0:
		return 0
	case c != '=':
		dataFlag = c
		if at(a, p+2) != '\n' || c <= ' ' || c >= 0x7f {
			return 0
		}
		p += 2
	default:
		// Words of 8 digits, each after one space; the last one may have
		// 2, 4 or 6.
		dataFlag = DataPresent
		dd := (*[fastMaxData + 4]byte)(data[:fastMaxData+4])
		for p += 2; at(a, p) == ' '; {
			x := le64(a, p+1)
			if e := at(a, p+9); swarHex(x) && (e == ' ' || e == '\n') {
				if nd == fastMaxData {
					return 0
				}
				binary.LittleEndian.PutUint32(dd[nd&(fastMaxData-1):], swarHexBytes(x))
				nd += 4
				p += 9
				continue
			}
			k := bits.TrailingZeros64(^swarHexMask(x)&swarHigh) >> 3
			if k != 2 && k != 4 && k != 6 || nd+k/2 > fastMaxData || at(a, p+1+k) != '\n' {
				return 0
			}
			keep := uint64(1)<<(8*k) - 1 // digits past the word become '0'
			binary.LittleEndian.PutUint32(dd[nd&(fastMaxData-1):], swarHexBytes(x&keep|0x30*swarOnes&^keep))
			nd += k / 2
			p += 1 + k
		}
		if at(a, p) != '\n' {
			return 0
		}
	}
	if p+16 >= fastWindowLen {
		return 0 // never for a kernel line: reads past the window's end wrapped around
	}
	// Field by field: cheaper than a composite literal (a temporary, then
	// a copy). The fields text does not carry are zeroed.
	ev.ID = id
	ev.Type = typ
	ev.Transfer = TransferType(tt)
	ev.In = in
	ev.Bus = uint16(bus)
	ev.Device = uint8(dev)
	ev.Endpoint = uint8(ep)
	ev.Status = status
	ev.SetupFlag = setupFlag
	ev.Setup = setup
	ev.Interval = interval
	ev.StartFrame, ev.ErrorCount, ev.NumDesc, ev.NDesc = 0, 0, 0, 0
	ev.ISO = iso[:0]
	ev.Length = uint32(length)
	ev.CapLen = 0
	ev.DataFlag = dataFlag
	ev.Data = data[:nd]
	ev.XferFlags = 0
	ev.Sec, ev.Usec = 0, 0
	ev.TextStamp = uint32(ts)
	ev.Fields = fields
	ev.Format = f
	return p + 1
}

// statusAt is intAt for a status: the two usual ones, 0 and -115
// (-EINPROGRESS, every submission), compared as one word.
func statusAt(a *fastWindow, p int, sep byte) (int32, int) {
	w := le64(a, p)
	if w&0xffff == uint64(sep)<<8|'0' {
		return 0, p + 1
	}
	if w&0xff_ffff_ffff == uint64(sep)<<32|'5'<<24|'1'<<16|'1'<<8|'-' {
		return -115, p + 4
	}
	return intAt(a, p, sep)
}

// intAt parses a signed decimal of 1 to 7 digits at b[p:] followed by the
// byte sep. It returns the value and the position of sep, or -1.
func intAt(a *fastWindow, p int, sep byte) (int32, int) {
	neg := at(a, p) == '-'
	if neg {
		p++
	}
	k, d := swarDigits(le64(a, p))
	v := int32(swarDecValue(d, k))
	p += k
	if k == 0 || k > 7 || at(a, p) != sep {
		return 0, -1
	}
	if neg {
		v = -v
	}
	return v, p
}

var pow10 = [...]uint64{1, 10, 100}
