package usb

import (
	"encoding/binary"
	"slices"

	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/usbmon"
)

// lineBuf is the room lineWriter.append reserves for a line and writes
// in place: indexed by a uint8 (at most 255), every store of up to 8
// bytes is within it by its type, with no bounds check. Its common lines
// are at most 146 bytes: the event number (at most 16 digits; 16 bytes
// are copied), the seconds (6 digits, '.', 6), the type, address, status
// and length (addrSlot: at most 37; 40 bytes are copied), " lat=" and
// "999.999ms", " setup=" and 16 hex digits, " data=", 32 hex digits and
// "...", '\n'.
type lineBuf = [256 + 8]byte

// lineWriter appends the lines of Pipeline.WriteText, the bytes
// appendEventText appends: the lines most events have (nothing decoded,
// status 0, a latency below one second) in place, into room reserved
// once, with no call per field, and with the digits of the event number
// and of the whole seconds kept from one line to the next (consecutive
// events are numbered n, n+1 and mostly share their second); any other
// line is appendEventText's (TestLineWriterMatchesText, FuzzLineWriter).
type lineWriter struct {
	seq    uint64   // the next event number seqDig holds, 0: none
	seqDig [24]byte // its digits, left-aligned (16 are copied)
	seqLen uint8
	sec    uint64 // the whole seconds secDig holds, when secLen > 0
	secDig uint64 // their digits as a little-endian word
	secLen uint8
	addr   [64]addrSlot // by a hash of their key
}

// addrSlot holds the bytes of a line from the event type to the length
// for one key and length (lineWriter.append): the events of an
// endpoint mostly repeat the length of the one before.
type addrSlot struct {
	key    uint64    // 0: none
	length uint32    // the length b ends with
	b      [5]uint64 // the bytes, as little-endian words
	n      uint8
}

// set makes sl hold the bytes of ev's type, address (AppendAddress),
// status 0 and length, at most 37, for key.
func (sl *addrSlot) set(key uint64, ev *usbmon.Event) {
	var w [48]byte
	b := append(w[:0], ' ', byte(ev.Type), ' ')
	b = AppendAddress(b, ev)
	if ev.Type != usbmon.Submission {
		b = append(b, " OK"...)
	}
	b = append(b, " len="...)
	b = ndjson.AppendUint(b, uint64(ev.Length))
	sl.key, sl.length, sl.n = key, ev.Length, uint8(len(b))
	for j := range sl.b {
		sl.b[j] = binary.LittleEndian.Uint64(w[8*j:])
	}
}

// append appends the line of the event ev, numbered seq, relUS
// microseconds after the first event, with the latency of its pair
// (paired), for an event whose decoding says nothing (Decoded.Summary
// ""; the caller hands the others to appendEventText: one argument less
// here, every argument in a register). Its common path calls no
// function: Go keeps no register across a call, and the reloads of every
// live value after each one cost as much as the formatting.
func (lw *lineWriter) append(b []byte, seq uint64, relUS int64, ev *usbmon.Event, latency int64, paired bool) []byte {
	if ev.Type != usbmon.Submission && ev.Status != 0 || uint64(relUS) >= 1e12 ||
		paired && uint64(latency-1) >= 1e6-1 || seq >= 1e16-1 {
		return appendEventText(b, seq, relUS, ev, latency, paired, &undecoded)
	}
	n := len(b)
	if cap(b)-n < len(lineBuf{}) {
		b = slices.Grow(b, len(lineBuf{}))
	}
	w := (*lineBuf)(b[n : n+len(lineBuf{})])
	if seq != lw.seq || lw.seqLen == 0 {
		lw.renumber(seq)
	}
	binary.LittleEndian.PutUint64(w[0:], binary.LittleEndian.Uint64(lw.seqDig[:8]))
	binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(lw.seqDig[8:16]))
	i := lw.seqLen
	if c := &lw.seqDig[(i-1)&15]; *c != '9' { // the next number: the last digit + 1
		*c++
		lw.seq = seq + 1
	} else {
		lw.next(seq)
	}
	w[i] = ' '
	i++
	us := uint64(relUS)
	s := us / 1e6
	if s != lw.sec || lw.secLen == 0 {
		lw.resecond(s)
	}
	binary.LittleEndian.PutUint64(w[i:], lw.secDig)
	i += lw.secLen
	// '.' and the microseconds' six digits (Digits8's eight less two
	// leading zeros), as appendSecondsMicros writes them.
	binary.LittleEndian.PutUint64(w[i:], '.'|ndjson.Digits8(uint32(us-s*1e6))>>16<<8)
	i += 7

	// " S Bi:3:006:1" or " C Bi:3:006:1 OK": the type, the address
	// (AppendAddress) and a completion's status 0 (StatusName), kept for
	// the last addresses seen: a capture goes back and forth between a
	// few endpoints.
	in := uint64(0)
	if ev.In {
		in = 1
	}
	key := 1<<63 | in<<56 | uint64(ev.Fields&usbmon.HasBus)<<48 | uint64(ev.Bus)<<32 |
		uint64(ev.Device)<<24 | uint64(ev.Endpoint)<<16 | uint64(ev.Transfer)<<8 | uint64(ev.Type)
	sl := &lw.addr[key*0x9e3779b97f4a7c15>>58]
	if sl.key != key || sl.length != ev.Length {
		sl.set(key, ev)
	}
	binary.LittleEndian.PutUint64(w[i:], sl.b[0])
	binary.LittleEndian.PutUint64(w[i+8:], sl.b[1])
	binary.LittleEndian.PutUint64(w[i+16:], sl.b[2])
	binary.LittleEndian.PutUint64(w[i+24:], sl.b[3])
	binary.LittleEndian.PutUint64(w[i+32:], sl.b[4])
	i += sl.n
	if paired {
		// The latency as appendMicros writes it: "186µs", "42.356ms",
		// "42.3ms", "42ms".
		*(*[5]byte)(w[i:]) = [5]byte{' ', 'l', 'a', 't', '='}
		i += 5
		us := uint32(latency)
		if us < 1000 {
			x, k := dec4(us)
			binary.LittleEndian.PutUint32(w[i:], x)
			i += k
			*(*[3]byte)(w[i:]) = [3]byte{0xc2, 0xb5, 's'} // "µs"
			i += 3
		} else {
			ms := us / 1000
			f := us - ms*1000
			x, k := dec4(ms)
			binary.LittleEndian.PutUint32(w[i:], x)
			i += k
			// '.' and three digits, less the trailing zeros.
			h := f / 100
			r := f - h*100
			binary.LittleEndian.PutUint32(w[i:], '.'|('0'+h)<<8|uint32(ndjson.DigitPair(r))<<16)
			switch {
			case f == 0:
			case r == 0:
				i += 2
			case r%10 == 0:
				i += 3
			default:
				i += 4
			}
			w[i], w[i+1] = 'm', 's'
			i += 2
		}
	}
	if ev.Type == usbmon.Submission && ev.HasSetup() {
		*(*[7]byte)(w[i:]) = [7]byte{' ', 's', 'e', 't', 'u', 'p', '='}
		x := binary.BigEndian.Uint64(ev.Setup[:])
		binary.BigEndian.PutUint64(w[i+7:], ndjson.Hex4(uint32(x>>32)))
		binary.BigEndian.PutUint64(w[i+15:], ndjson.Hex4(uint32(x)))
		i += 23
	}
	if ev.HasData() {
		// The first 16 bytes in hex, then "..." when there are more.
		*(*[6]byte)(w[i:]) = [6]byte{' ', 'd', 'a', 't', 'a', '='}
		i += 6
		data := ev.Data
		if len(data) >= 16 {
			ndjson.PutHex16((*[32]byte)(w[i:]), (*[16]byte)(data))
		} else {
			var x0, x1 uint64
			if len(data) >= 8 {
				x0, x1 = binary.BigEndian.Uint64(data), bigEndianShort(data[8:])
			} else {
				x0 = bigEndianShort(data)
			}
			binary.BigEndian.PutUint64(w[i:], ndjson.Hex4(uint32(x0>>32)))
			binary.BigEndian.PutUint64(w[i+8:], ndjson.Hex4(uint32(x0)))
			binary.BigEndian.PutUint64(w[i+16:], ndjson.Hex4(uint32(x1>>32)))
			binary.BigEndian.PutUint64(w[i+24:], ndjson.Hex4(uint32(x1)))
		}
		if len(data) > 16 {
			*(*[3]byte)(w[i+32:]) = [3]byte{'.', '.', '.'}
			i += 3
		}
		i += 2 * uint8(min(len(data), 16))
	}
	w[i] = '\n'
	return b[:n+int(i)+1]
}

// undecoded is the Decoded of an event whose decoding says nothing.
var undecoded Decoded

// dec4 returns the decimal digits of v < 10^4 as a little-endian word
// (the first digit in the low byte) and their count: a caller writes
// the word at its place and moves on by the count, with no call.
func dec4(v uint32) (uint32, uint8) {
	n := 4 - (v-1000)>>31 - (v-100)>>31 - (v-10)>>31 // 4 less one for each of 1000, 100, 10 that v is below
	return digits4(v) >> (32 - 8*n), uint8(n)
}

// digits4 returns the four decimal digits of v < 10^4, with leading
// zeros, as a little-endian word (the first digit in the low byte): v
// split into two pairs of digits in 16-bit lanes, each into digits in
// bytes, with multiplications that stay inside their lane (as
// ndjson.Digits8).
func digits4(v uint32) uint32 {
	q := v * 5243 >> 19 // v/100 for v < 10^4
	x := q | (v-q*100)<<16
	t := x * 103 >> 10 & 0x000f000f // x/10 in each lane
	return (t | (x-t*10)<<8) + 0x30303030
}

// bigEndianShort returns the bytes of p (fewer than 8) as the high bytes
// of a big-endian word.
func bigEndianShort(p []byte) uint64 {
	var x uint64
	for _, c := range p {
		x = x<<8 | uint64(c)
	}
	return x << (8 * (8 - len(p)) & 63)
}

// renumber makes seqDig hold seq.
func (lw *lineWriter) renumber(seq uint64) {
	lw.seq, lw.seqLen = seq, uint8(ndjson.PutUint(lw.seqDig[:], 0, seq))
}

// resecond makes secDig hold s < 10^6.
func (lw *lineWriter) resecond(s uint64) {
	var t [24]byte
	lw.sec, lw.secLen = s, uint8(ndjson.PutUint(t[:], 0, s))
	lw.secDig = binary.LittleEndian.Uint64(t[:8])
}

// next makes seqDig hold seq+1 (seq < 10^16 - 1: at most 16 digits),
// carrying.
func (lw *lineWriter) next(seq uint64) {
	j := int(lw.seqLen) - 1
	for j >= 0 && lw.seqDig[j] == '9' {
		lw.seqDig[j] = '0'
		j--
	}
	if j < 0 {
		// 9...9 + 1: a digit more.
		lw.seqLen = uint8(ndjson.PutUint(lw.seqDig[:], 0, seq+1))
	} else {
		lw.seqDig[j]++
	}
	lw.seq = seq + 1
}
