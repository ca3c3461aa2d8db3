package usbmon

// Text line parsing over bytes, without allocation on the good path.

import (
	"encoding/binary"
	"math/bits"
)

// hex8 parses exactly 8 hex digits (either case) as a big-endian 32-bit
// value, 8 bytes at a time (SWAR: no loop, no table, no dependency chain).
// b must hold at least 8 bytes. The hot paths call its two halves, which
// the compiler inlines (hex8 itself is over the inlining budget).
func hex8(b []byte) (uint32, bool) {
	x := binary.LittleEndian.Uint64(b) // b[0] in the low byte
	if !swarHex(x) {
		return 0, false
	}
	return swarHexValue(x), true
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// swarHex reports whether the 8 bytes of x are all hex digits.
func swarHex(x uint64) bool { return swarHexMask(x) == swarHigh }

// swarHexMask has the high bit set of each byte of x that is a hex digit,
// up to the first byte that is not one.
func swarHexMask(x uint64) uint64 {
	// A byte below 0x80 plus at most 0x50 carries into no other byte, and
	// its high bit then answers "is it at least ..."; a byte of 0x80 or
	// more is no digit (&^ x) but its carry garbles the bytes after it.
	l := x | 0x20*swarOnes // letters to lower case
	digit := (x + 0x50*swarOnes) &^ (x + 0x46*swarOnes)
	alpha := (l + 0x1f*swarOnes) &^ (l + 0x19*swarOnes)
	return (digit | alpha) &^ x & swarHigh
}

// swarHexValue is the value of 8 hex digits (checked by swarHex), the
// lowest byte of x the most significant digit.
func swarHexValue(x uint64) uint32 { return bits.ReverseBytes32(swarHexBytes(x)) }

// swarHexBytes is the 4 bytes that 8 hex digits (checked by swarHex)
// stand for, in their order (the first in the low byte).
func swarHexBytes(x uint64) uint32 {
	// Nibbles: the low four bits, plus 9 for letters (bit 6 set).
	n := x&(0x0f*swarOnes) + (x>>6)&swarOnes*9
	n = (n<<4 | n>>8) & 0x00ff00ff00ff00ff // byte 2i holds digits 2i, 2i+1
	n = (n | n>>8) & 0x0000ffff0000ffff
	return uint32(n | n>>16)
}

// scanner walks the space-separated words of one line.
type scanner struct {
	b []byte
	p int
}

// word returns the next word, or nil at the end of the line.
func (s *scanner) word() []byte {
	b, p := s.b, s.p
	for p < len(b) && b[p] == ' ' {
		p++
	}
	st := p
	for p < len(b) && b[p] != ' ' {
		p++
	}
	s.p = p
	if st == p {
		return nil
	}
	return b[st:p]
}

// hexField parses the next word as at most 16 hex digits, in one pass.
func (s *scanner) hexField() (uint64, bool) {
	b, p := s.b, s.p
	for p < len(b) && b[p] == ' ' {
		p++
	}
	// Fast path: 16 digits then a space, what the kernel prints for
	// every URB tag on 64-bit machines (constant bounds: no checks).
	if p+16 < len(b) && b[p+16] == ' ' {
		hi := binary.LittleEndian.Uint64(b[p:])
		lo := binary.LittleEndian.Uint64(b[p+8:])
		if swarHex(hi) && swarHex(lo) {
			s.p = p + 16
			return uint64(swarHexValue(hi))<<32 | uint64(swarHexValue(lo)), true
		}
	}
	st := p
	end := min(len(b), p+17)
	var v uint64
	var bad byte
	for p < end && b[p] != ' ' {
		h := hexTable[b[p]]
		bad |= h
		v = v<<4 | uint64(h&0xf)
		p++
	}
	if bad&0xf0 != 0 || p-st > 16 {
		return 0, false
	}
	s.p = p
	return v, p > st
}

// decUntil parses decimal digits up to the byte stop (not consumed) or the
// end of the word, refusing values above max (at most 2^32-1), in one pass.
func (s *scanner) decUntil(stop byte, max uint64) (uint64, bool) {
	b, p := s.b, s.p
	st := p
	var v uint64
	for p < len(b) && b[p] != stop && b[p] != ' ' {
		c := b[p] - '0'
		v = v*10 + uint64(c) // no overflow: v <= max < 2^32 before
		if c > 9 || v > max {
			return 0, false
		}
		p++
	}
	s.p = p
	return v, p > st
}

// int32Field parses the next word as a signed decimal int32 in one pass.
// On any doubt (not a plain number) it reports false and consumes
// nothing: the caller then takes the general path, with its errors.
func (s *scanner) int32Field() (int32, bool) {
	b, p := s.b, s.p
	for p < len(b) && b[p] == ' ' {
		p++
	}
	neg := p < len(b) && b[p] == '-'
	if neg {
		p++
	}
	st := p
	var v uint64
	for p < len(b) && b[p] != ' ' {
		c := b[p] - '0'
		v = v*10 + uint64(c)
		if c > 9 || p-st >= 10 {
			return 0, false
		}
		p++
	}
	if p == st || v > 1<<31 || v == 1<<31 && !neg {
		return 0, false
	}
	s.p = p
	if neg {
		return int32(-int64(v)), true
	}
	return int32(v), true
}

// hexTable maps an ASCII byte to its hex value, or 0xff. Read-only.
var hexTable = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()

func hexVal(c byte) int {
	v := hexTable[c]
	if v == 0xff {
		return -1
	}
	return int(v)
}

// parseHex parses up to 16 hex digits.
func parseHex(w []byte) (uint64, bool) {
	if len(w) == 0 || len(w) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range w {
		h := hexVal(c)
		if h < 0 {
			return 0, false
		}
		v = v<<4 | uint64(h)
	}
	return v, true
}

// parseUint parses a decimal number that fits in max (at most 2^32-1).
func parseUint(w []byte, max uint64) (uint64, bool) {
	if len(w) == 0 || len(w) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range w {
		d := c - '0'
		v = v*10 + uint64(d) // no overflow: v <= max < 2^32 before
		if d > 9 || v > max {
			return 0, false
		}
	}
	return v, true
}

// parseInt32 parses a signed decimal int32.
func parseInt32(w []byte) (int32, bool) {
	neg := false
	if len(w) > 0 && w[0] == '-' {
		neg, w = true, w[1:]
	}
	if neg {
		v, ok := parseUint(w, 1<<31)
		return int32(-int64(v)), ok
	}
	v, ok := parseUint(w, 1<<31-1)
	return int32(v), ok
}

// splitColon splits w at colons into parts (at most len(parts)); it returns
// the number of parts, or -1 if there are more.
func splitColon(w []byte, parts [][]byte) int {
	n := 0
	st := 0
	for i := 0; i <= len(w); i++ {
		if i == len(w) || w[i] == ':' {
			if n == len(parts) {
				return -1
			}
			parts[n] = w[st:i]
			n++
			st = i + 1
		}
	}
	return n
}

// parseTextLine fills ev from one line (no newline). It returns "" or a
// description of the problem.
func parseTextLine(line []byte, f Format, ev *Event) string {
	s := scanner{b: line}
	id, ok := s.hexField()
	if !ok {
		return "bad URB tag"
	}
	ev.ID = id
	for s.p < len(line) && line[s.p] == ' ' {
		s.p++
	}
	ts, ok := s.decUntil(' ', 1<<32-1)
	if !ok || s.p < len(line) && line[s.p] != ' ' {
		return "bad timestamp"
	}
	ev.TextStamp = uint32(ts)
	var w []byte
	if p := s.p; p+2 < len(line) && line[p] == ' ' && line[p+2] == ' ' && (line[p+1] == 'S' || line[p+1] == 'C' || line[p+1] == 'E') {
		ev.Type = EventType(line[p+1]) // fast path: one space, the type, one space
		s.p = p + 3
	} else {
		w = s.word()
		if len(w) != 1 || (w[0] != 'S' && w[0] != 'C' && w[0] != 'E') {
			return "bad event type (want S, C or E)"
		}
		ev.Type = EventType(w[0])
	}

	// Address word: Ci:1:001:0 (1u) or Ci:001:0 (1t).
	for s.p < len(line) && line[s.p] == ' ' {
		s.p++
	}
	if s.p+3 > len(line) || line[s.p+2] != ':' {
		return "bad address word"
	}
	switch line[s.p] {
	case 'Z':
		ev.Transfer = Isochronous
	case 'I':
		ev.Transfer = Interrupt
	case 'C':
		ev.Transfer = Control
	case 'B':
		ev.Transfer = Bulk
	default:
		return "bad transfer type in address word"
	}
	switch line[s.p+1] {
	case 'i':
		ev.In = true
	case 'o':
		ev.In = false
	default:
		return "bad direction in address word"
	}
	s.p += 3
	ev.Fields = HasTextStamp
	ev.Format = f
	var nums [3]uint64
	n := 0
	for {
		if n == 3 {
			return "bad address word"
		}
		v, ok := s.decUntil(':', 1<<16-1)
		if !ok {
			return "bad number in address word"
		}
		nums[n] = v
		n++
		if s.p < len(line) && line[s.p] == ':' {
			s.p++
			continue
		}
		break
	}
	if f == Format1u {
		if n != 3 {
			return "address word has no bus number (is this 1t?)"
		}
		ev.Bus = uint16(nums[0])
		ev.Fields |= HasBus
		nums[0], nums[1] = nums[1], nums[2]
	} else if n != 2 {
		if n == 3 {
			return "address word has a bus number (is this 1u?)"
		}
		return "bad address word"
	}
	if nums[0] > 255 {
		return "bad device address"
	}
	if nums[1] > 127 {
		return "bad endpoint number"
	}
	ev.Device, ev.Endpoint = uint8(nums[0]), uint8(nums[1])
	ev.SetupFlag = SetupNone

	switch {
	case f == Format1u && ev.Type != SubmitError && ev.Transfer == Isochronous:
		ev.Fields |= HasTextExt
		w = s.word()
		var sp [4][]byte
		k := splitColon(w, sp[:])
		want := 3
		if ev.Type == Callback {
			want = 4
		}
		if k != want {
			return "bad isochronous status word (want status:interval:start_frame[:error_count])"
		}
		var ok1, ok2, ok3 bool
		ev.Status, ok1 = parseInt32(sp[0])
		ev.Interval, ok2 = parseInt32(sp[1])
		ev.StartFrame, ok3 = parseInt32(sp[2])
		if !ok1 || !ok2 || !ok3 {
			return "bad number in isochronous status word"
		}
		if k == 4 {
			if ev.ErrorCount, ok = parseInt32(sp[3]); !ok {
				return "bad error count"
			}
		}
		if ev.NumDesc, ok = parseInt32(s.word()); !ok {
			return "bad ISO descriptor count"
		}
		nd := int(ev.NumDesc)
		if nd > 5 {
			nd = 5
		}
		for i := 0; i < nd; i++ {
			var dp [3][]byte
			if splitColon(s.word(), dp[:]) != 3 {
				return "bad ISO descriptor (want status:offset:length)"
			}
			st, ok1 := parseInt32(dp[0])
			o, ok2 := parseUint(dp[1], 1<<32-1)
			l, ok3 := parseUint(dp[2], 1<<32-1)
			if !ok1 || !ok2 || !ok3 {
				return "bad number in ISO descriptor"
			}
			ev.ISO = append(ev.ISO, ISODesc{Status: st, Offset: uint32(o), Length: uint32(l)})
		}
	case f == Format1u && ev.Type != SubmitError && ev.Transfer == Interrupt:
		ev.Fields |= HasTextExt
		var sp [2][]byte
		if splitColon(s.word(), sp[:]) != 2 {
			return "bad interrupt status word (want status:interval)"
		}
		var ok1, ok2 bool
		ev.Status, ok1 = parseInt32(sp[0])
		ev.Interval, ok2 = parseInt32(sp[1])
		if !ok1 || !ok2 {
			return "bad number in interrupt status word"
		}
	default:
		if v, ok := s.int32Field(); ok {
			ev.Status = v // fast path: a plain number
			break
		}
		w = s.word()
		if len(w) == 0 {
			return "missing status"
		}
		if len(w) == 1 && (w[0] < '0' || w[0] > '9') {
			// Setup tag: 's' and five fields, or another letter and filler.
			if w[0] == 's' {
				ev.SetupFlag = SetupPresent
				for i, width := range [5]int{2, 2, 4, 4, 4} {
					x := s.word()
					if len(x) != width {
						return "bad setup packet"
					}
					v, ok := parseHex(x)
					if !ok {
						return "bad setup packet"
					}
					if width == 2 {
						ev.Setup[i] = byte(v)
					} else {
						j := 2 + 2*(i-2)
						ev.Setup[j], ev.Setup[j+1] = byte(v), byte(v>>8)
					}
				}
			} else {
				ev.SetupFlag = w[0]
				for _, filler := range [5]string{"__", "__", "____", "____", "____"} {
					if string(s.word()) != filler {
						return "bad setup filler"
					}
				}
			}
			// The kernel prints the setup tag instead of the status on
			// control submissions, whose status is always -EINPROGRESS.
			ev.Status = -115
		} else if ev.Status, ok = parseInt32(w); !ok {
			return "bad status"
		}
	}

	length, ok := s.int32Field()
	if !ok {
		if length, ok = parseInt32(s.word()); !ok {
			return "bad data length"
		}
	}
	ev.Length = uint32(length)
	ev.DataFlag = 'L'
	if ev.Type == SubmitError {
		ev.DataFlag = 'E'
	}
	w = s.word()
	if w == nil {
		if length > 0 {
			return "missing data tag"
		}
		return ""
	}
	if length <= 0 {
		return "unexpected words after a zero data length"
	}
	if len(w) != 1 || w[0] <= ' ' || w[0] >= 0x7f { // a tag is a printable character
		return "bad data tag"
	}
	if w[0] != '=' {
		ev.DataFlag = w[0]
		if s.word() != nil {
			return "unexpected words after the data tag"
		}
		return ""
	}
	ev.DataFlag = DataPresent
	// Data words: up to 4 bytes in hex each, separated by one space.
	b, p := s.b, s.p
	data := ev.Data
	for {
		for p < len(b) && b[p] == ' ' {
			p++
		}
		if p == len(b) {
			break
		}
		st := p
		// Fast path: a whole word of 8 valid hex digits (4 bytes), what
		// the kernel prints for all but the last word of a line.
		if p+8 <= len(b) && (p+8 == len(b) || b[p+8] == ' ') && len(data)+4 <= maxTextData {
			if x := binary.LittleEndian.Uint64(b[p:]); swarHex(x) {
				data = binary.BigEndian.AppendUint32(data, swarHexValue(x))
				p += 8
				continue
			}
		}
		for p+1 < len(b) && b[p] != ' ' {
			h, l := hexTable[b[p]], hexTable[b[p+1]]
			if h|l == 0xff {
				return "bad hex digit in data"
			}
			data = append(data, h<<4|l)
			p += 2
		}
		if p < len(b) && b[p] != ' ' || p-st > 8 {
			return "bad data word"
		}
		if len(data) > maxTextData {
			return "too many data bytes"
		}
	}
	ev.Data = data
	return ""
}
