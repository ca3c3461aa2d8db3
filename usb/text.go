package usb

import (
	"encoding/binary"
	"math"
	"strconv"
	"time"

	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/usbmon"
)

// The text forms of 'iotap usb read' and 'iotap usb pair': one line per
// event or transfer, for people (the NDJSON forms are in ndjson.go).

// AppendAddress appends the usbmon address word of ev, as the kernel's
// text interface writes it: Ci:3:006:0 (transfer type and direction, bus,
// device, endpoint), or Ci:006:0 for '1t' text, which has no bus number.
func AppendAddress(dst []byte, ev *usbmon.Event) []byte {
	dst = append(dst, ev.Transfer.Letter())
	if ev.In {
		dst = append(dst, 'i')
	} else {
		dst = append(dst, 'o')
	}
	dst = append(dst, ':')
	if ev.Fields&usbmon.HasBus != 0 {
		dst = ndjson.AppendUint(dst, uint64(ev.Bus))
		dst = append(dst, ':')
	}
	if ev.Device < 100 {
		dst = append(dst, '0')
	}
	if ev.Device < 10 {
		dst = append(dst, '0')
	}
	dst = ndjson.AppendUint(dst, uint64(ev.Device))
	dst = append(dst, ':')
	return ndjson.AppendUint(dst, uint64(ev.Endpoint))
}

// Elapsed returns the microseconds from first (Pipeline.First) to t, the
// Micros stamp of ev. The 32-bit microsecond stamps of usbmon text wrap
// every 4096 s: a stamp before the first is taken as one wrap later.
func Elapsed(first, t int64, ev *usbmon.Event) int64 {
	d := t - first
	if ev.Fields&usbmon.HasWallClock == 0 && d < 0 {
		d += 4096 * 1000000
	}
	return d
}

// AppendEventText appends the line of 'iotap usb read' for ev: its
// position seq, seconds since the first event, S/C/E, the address,
// status (completions), length, latency (paired completions), and the
// decoding d or else the setup packet and the first data bytes.
func AppendEventText(b []byte, seq uint64, rel float64, ev *usbmon.Event, p Pair, paired bool, d Decoded) []byte {
	b = ndjson.AppendUint(b, seq)
	b = append(b, ' ')
	b = appendSeconds6(b, rel)
	return appendEventRest(b, ev, p.Latency, paired, &d)
}

// appendEventText is AppendEventText given the time since the first event
// in microseconds (appendSecondsMicros: no float), the pair's latency and
// the decoding by its address (Pipeline.WriteText).
func appendEventText(b []byte, seq uint64, relUS int64, ev *usbmon.Event, latency int64, paired bool, d *Decoded) []byte {
	b = ndjson.AppendUint(b, seq)
	b = append(b, ' ')
	b = appendSecondsMicros(b, relUS)
	return appendEventRest(b, ev, latency, paired, d)
}

// appendEventRest appends what follows the time column of a line.
func appendEventRest(b []byte, ev *usbmon.Event, latency int64, paired bool, d *Decoded) []byte {
	b = append(b, ' ', byte(ev.Type), ' ')
	b = AppendAddress(b, ev)
	if ev.Type != usbmon.Submission {
		b = append(b, ' ')
		b = append(b, StatusName(ev.Status)...)
		if IsStall(ev.Status) {
			b = append(b, "(stall)"...)
		}
	}
	if ev.Type != usbmon.Submission || !ev.HasSetup() || d.Summary == "" { // the request shows wLength
		b = append(b, " len="...)
		b = ndjson.AppendUint(b, uint64(ev.Length))
	}
	if paired {
		b = append(b, " lat="...)
		b = appendMicros(b, latency)
	}
	switch {
	case d.Summary != "":
		b = append(b, ' ')
		b = append(b, d.Summary...)
		if d.Err != nil {
			b = append(b, " [partial: "...)
			b = append(b, d.Err.Error()...)
			b = append(b, ']')
		}
	case ev.Type == usbmon.Submission && ev.HasSetup():
		b = append(b, " setup="...)
		b = ndjson.AppendHex(b, ev.Setup[:])
	}
	if d.Summary == "" && ev.HasData() {
		b = append(b, " data="...)
		n := min(len(ev.Data), 16)
		b = ndjson.AppendHex(b, ev.Data[:n])
		if len(ev.Data) > n {
			b = append(b, "..."...)
		}
	}
	return append(b, '\n')
}

// appendSeconds6 appends rel as strconv.AppendFloat(b, rel, 'f', 6, 64)
// does, without its float formatting when rel is a whole number of
// microseconds below 10^6 s (as Elapsed/1e6 gives): then the double is
// within far less than half a microsecond of that number, so the six
// decimals are its digits.
func appendSeconds6(b []byte, rel float64) []byte {
	if rel > -1e6 && rel < 1e6 {
		m := int64(math.Round(rel * 1e6))
		if float64(m)/1e6 == rel && (m != 0 || !math.Signbit(rel)) {
			return appendSecondsMicros(b, m) // |m| < 10^12: its integer path
		}
	}
	return strconv.AppendFloat(b, rel, 'f', 6, 64)
}

// appendSecondsMicros appends us microseconds as seconds with six
// decimals: the bytes appendSeconds6(b, float64(us)/1e6) writes (its
// fast path's, below 10^6 s), from the integer, without the float's
// rounding and check.
func appendSecondsMicros(b []byte, us int64) []byte {
	if us <= -1e12 || us >= 1e12 {
		return appendSeconds6(b, float64(us)/1e6)
	}
	u := uint64(us)
	if us < 0 {
		b = append(b, '-')
		u = uint64(-us)
	}
	s := u / 1000000
	b = ndjson.AppendUint(b, s)
	// '.' and the six digits of the microseconds (Digits8's eight less
	// two leading zeros) in one word.
	b = binary.LittleEndian.AppendUint64(b, '.'|ndjson.Digits8(uint32(u-s*1000000))>>16<<8)
	return b[:len(b)-1]
}

// appendMicros appends us microseconds as time.Duration.String writes
// them, directly below one second (the latencies of almost every
// transfer).
func appendMicros(b []byte, us int64) []byte {
	switch {
	case us > 0 && us < 1000:
		return append(ndjson.AppendUint(b, uint64(us)), "µs"...)
	case us >= 1000 && us < 1000000:
		b = ndjson.AppendUint(b, uint64(us/1000))
		if f := us % 1000; f != 0 {
			b = append(b, '.', byte('0'+f/100))
			if f%100 != 0 {
				b = append(b, byte('0'+f/10%10))
				if f%10 != 0 {
					b = append(b, byte('0'+f%10))
				}
			}
		}
		return append(b, "ms"...)
	}
	return append(b, time.Duration(us*1000).String()...)
}

// AppendHexDump appends data as tcpdump -X shows it: lines of an offset,
// 16 bytes in hex and the same bytes as ASCII, indented by four spaces.
func AppendHexDump(b, data []byte) []byte {
	const digits = "0123456789abcdef"
	for off := 0; off < len(data); off += 16 {
		row := data[off:min(off+16, len(data))]
		b = append(b, "    "...)
		for s := 12; s >= 0; s -= 4 {
			b = append(b, digits[(off>>s)&15])
		}
		b = append(b, "  "...)
		for i := 0; i < 16; i++ {
			if i < len(row) {
				b = append(b, digits[row[i]>>4], digits[row[i]&15], ' ')
			} else {
				b = append(b, "   "...)
			}
			if i == 7 {
				b = append(b, ' ')
			}
		}
		b = append(b, ' ')
		for _, c := range row {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			b = append(b, c)
		}
		b = append(b, '\n')
	}
	return b
}

// AppendPairText appends the line of 'iotap usb pair' for the transfer p
// completed by ev: the event numbers of submission and completion, URB id,
// address, status, actual/requested length, latency and the control
// request (named with the class ids knows).
func AppendPairText(b []byte, p Pair, ev *usbmon.Event, ids *Identities) []byte {
	b = strconv.AppendUint(b, p.Submit.Seq+1, 10)
	b = append(b, "->"...)
	b = strconv.AppendUint(b, p.Seq+1, 10)
	b = append(b, " urb=0x"...)
	b = strconv.AppendUint(b, p.ID, 16)
	b = append(b, ' ')
	b = AppendAddress(b, ev)
	b = append(b, ' ')
	b = append(b, StatusName(ev.Status)...)
	b = append(b, " len="...)
	b = strconv.AppendUint(b, uint64(p.Length), 10)
	b = append(b, '/')
	b = strconv.AppendUint(b, uint64(p.Submit.Length), 10)
	b = append(b, " lat="...)
	b = append(b, time.Duration(p.Latency*1000).String()...)
	if p.Submit.HasSetup {
		if req := p.Submit.Setup.Describe(ClassHint(ids, ev.Bus, ev.Device, p.Submit.Setup)); req != "" {
			b = append(b, ' ')
			b = append(b, req...)
		}
	}
	return append(b, '\n')
}

// UnmatchedEvent is the submission event of an unmatched submission s of
// key k (for filters and AppendAddress).
func UnmatchedEvent(k Key, s Submission) usbmon.Event {
	return usbmon.Event{ID: k.ID, Type: usbmon.Submission, Transfer: k.Transfer, Bus: k.Bus, Device: k.Device,
		Endpoint: k.Endpoint & 0x0f, In: k.Endpoint&0x80 != 0, Length: s.Length}
}

// AppendUnmatchedText appends the line of 'iotap usb pair --unmatched'
// for a submission s of key k that never completed; kind is
// "superseded" or "in_flight".
func AppendUnmatchedText(b []byte, kind string, k Key, s Submission, ids *Identities) []byte {
	ev := UnmatchedEvent(k, s)
	b = strconv.AppendUint(b, s.Seq+1, 10)
	b = append(b, "->"...)
	b = append(b, kind...)
	b = append(b, " urb=0x"...)
	b = strconv.AppendUint(b, k.ID, 16)
	b = append(b, ' ')
	b = AppendAddress(b, &ev)
	b = append(b, " len=?/"...)
	b = strconv.AppendUint(b, uint64(s.Length), 10)
	if s.HasSetup {
		if req := s.Setup.Describe(ClassHint(ids, k.Bus, k.Device, s.Setup)); req != "" {
			b = append(b, ' ')
			b = append(b, req...)
		}
	}
	return append(b, '\n')
}
