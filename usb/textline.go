package usb

import (
	"encoding/binary"
	"slices"

	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/usbmon"
)

// lineRoom bounds the bytes appendEventLine writes in place: the event
// number (at most 16 digits; 16 bytes are copied), the seconds (6 digits, '.', 6), " S ", the
// address (at most 17), " OK", " len=" and 10 digits, " lat=" and
// "999.999ms", " setup=" and 16 hex digits, " data=", 32 hex digits and
// "...", '\n': 146, plus the slack of its word stores.
const lineRoom = 192

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
	seqLen int
	sec    uint64 // the whole seconds secDig holds, when secLen > 0
	secDig uint64 // their digits as a little-endian word
	secLen int
}

// append appends the line of the event ev, numbered seq, relUS
// microseconds after the first event, with the latency of its pair
// (paired) and its decoding d.
func (lw *lineWriter) append(b []byte, seq uint64, relUS int64, ev *usbmon.Event, latency int64, paired bool, d *Decoded) []byte {
	if d.Summary != "" || ev.Type != usbmon.Submission && ev.Status != 0 || uint64(relUS) >= 1e12 ||
		paired && uint64(latency-1) >= 1e6-1 || seq >= 1e16-1 {
		return appendEventText(b, seq, relUS, ev, latency, paired, d)
	}
	n := len(b)
	if cap(b)-n < lineRoom {
		b = slices.Grow(b, lineRoom)
	}
	w := b[n : n+lineRoom]
	if seq != lw.seq || lw.seqLen == 0 {
		lw.seqLen = ndjson.PutUint(lw.seqDig[:], 0, seq)
	}
	binary.LittleEndian.PutUint64(w, binary.LittleEndian.Uint64(lw.seqDig[:8]))
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
		var t [24]byte
		lw.sec, lw.secLen = s, ndjson.PutUint(t[:], 0, s)
		lw.secDig = binary.LittleEndian.Uint64(t[:8])
	}
	binary.LittleEndian.PutUint64(w[i:], lw.secDig)
	i += lw.secLen
	// '.' and the microseconds' six digits (Digits8's eight less two
	// leading zeros), as appendSecondsMicros writes them.
	binary.LittleEndian.PutUint64(w[i:], '.'|ndjson.Digits8(uint32(us-s*1e6))>>16<<8)
	i += 7

	// " S Bi:" then the bus, the device's three digits and the endpoint
	// (AppendAddress).
	a := (*[6]byte)(w[i:])
	a[0], a[1], a[2], a[3], a[4], a[5] = ' ', byte(ev.Type), ' ', ev.Transfer.Letter(), 'o', ':'
	if ev.In {
		a[4] = 'i'
	}
	i += 6
	if ev.Fields&usbmon.HasBus != 0 {
		i = ndjson.PutUint(w, i, uint64(ev.Bus))
		w[i] = ':'
		i++
	}
	dev := a3(ev.Device)
	binary.LittleEndian.PutUint32(w[i:], dev)
	i = ndjson.PutUint(w, i+4, uint64(ev.Endpoint))

	if ev.Type != usbmon.Submission {
		*(*[3]byte)(w[i:]) = [3]byte{' ', 'O', 'K'} // status 0 (StatusName)
		i += 3
	}
	*(*[5]byte)(w[i:]) = [5]byte{' ', 'l', 'e', 'n', '='}
	i = ndjson.PutUint(w, i+5, uint64(ev.Length))
	if paired {
		*(*[5]byte)(w[i:]) = [5]byte{' ', 'l', 'a', 't', '='}
		i = putMicros(w, i+5, uint64(latency))
	}
	if ev.Type == usbmon.Submission && ev.HasSetup() {
		*(*[7]byte)(w[i:]) = [7]byte{' ', 's', 'e', 't', 'u', 'p', '='}
		hi, lo := ndjson.HexWords(binary.BigEndian.Uint64(ev.Setup[:]))
		binary.BigEndian.PutUint64(w[i+7:], hi)
		binary.BigEndian.PutUint64(w[i+15:], lo)
		i += 23
	}
	if ev.HasData() {
		*(*[6]byte)(w[i:]) = [6]byte{' ', 'd', 'a', 't', 'a', '='}
		h := (*[32]byte)(w[i+6:])
		if len(ev.Data) >= 16 {
			ndjson.PutHex16(h, (*[16]byte)(ev.Data))
			i += 6 + 32
			if len(ev.Data) > 16 {
				*(*[3]byte)(w[i:]) = [3]byte{'.', '.', '.'}
				i += 3
			}
		} else {
			var t [16]byte
			copy(t[:], ev.Data)
			ndjson.PutHex16(h, &t)
			i += 6 + 2*len(ev.Data)
		}
	}
	w[i] = '\n'
	return b[:n+i+1]
}

// next makes seqDig hold seq+1 (seq < 10^16 - 1: at most 16 digits),
// carrying.
func (lw *lineWriter) next(seq uint64) {
	j := lw.seqLen - 1
	for j >= 0 && lw.seqDig[j] == '9' {
		lw.seqDig[j] = '0'
		j--
	}
	if j < 0 {
		// 9...9 + 1: a digit more.
		lw.seqLen = ndjson.PutUint(lw.seqDig[:], 0, seq+1)
	} else {
		lw.seqDig[j]++
	}
	lw.seq = seq + 1
}

// a3 returns the three digits of d (with leading zeros) and ':' as a
// little-endian word.
func a3(d uint8) uint32 {
	h := uint32(d) / 100
	t := uint32(d) - h*100
	return '0' + h | uint32(ndjson.DigitPair(t))<<8 | ':'<<24
}

// putMicros writes us microseconds, 0 < us < 10^6, at w[i:] as
// appendMicros appends them ("186µs", "42.356ms", "42.3ms", "42ms") and
// returns the index after them.
func putMicros(w []byte, i int, us uint64) int {
	if us < 1000 {
		i = ndjson.PutUint(w, i, us)
		*(*[3]byte)(w[i:]) = [3]byte{0xc2, 0xb5, 's'} // "µs"
		return i + 3
	}
	ms := us / 1000
	f := us - ms*1000
	i = ndjson.PutUint(w, i, ms)
	if f != 0 {
		// '.' and up to three digits, without trailing zeros.
		h := f / 100
		r := f - h*100
		binary.LittleEndian.PutUint32(w[i:], '.'|uint32('0'+h)<<8|uint32(ndjson.DigitPair(uint32(r)))<<16)
		switch {
		case r == 0:
			i += 2
		case r%10 == 0:
			i += 3
		default:
			i += 4
		}
	}
	w[i], w[i+1] = 'm', 's'
	return i + 2
}
