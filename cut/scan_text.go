package cut

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/iotap/iotap/mmiotrace"
)

// mmioScanner reads mmiotrace logs line by line with the mmiotrace
// package's one record parser.
type mmioScanner struct {
	base
	rec mmiotrace.Record
}

func (s *mmioScanner) reset(r io.Reader, off int64, _ int64) { s.base.reset(r, off) }

var (
	mmioSrcR    = []byte("R")
	mmioSrcW    = []byte("W")
	mmioSrcMark = []byte("MARK")
	mmioSrcMap  = []byte("MAP")
	mmioSrcUnk  = []byte("UNKNOWN")
	mmioSrcOth  = []byte("other")
)

func (s *mmioScanner) next(u *unit) ([]byte, error) {
	l, err := s.line()
	if err != nil {
		return nil, err
	}
	*u = unit{kind: kindEvent}
	body := trimEOL(l)
	cutShort := endsCut(l)
	defer func() {
		if cutShort && u.kind == kindEvent {
			// The kernel ends every line with a newline.
			markCut(u)
		}
	}()
	// Fast path: "R|W WIDTH SEC.USEC ..." needs only its stamp.
	if len(body) > 4 && (body[0] == 'R' || body[0] == 'W') && body[1] == ' ' {
		if t, ok := rwStamp(body); ok {
			u.timed, u.t = true, t
			if body[0] == 'R' {
				u.src = mmioSrcR
			} else {
				u.src = mmioSrcW
			}
			return l, nil
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		u.kind = kindHeader
		return l, nil
	}
	if perr := mmiotrace.ParseLine(body, &s.rec); perr != nil {
		// A damaged line stays in place: kept when its neighbours are.
		u.src = mmioSrcOth
		return l, nil
	}
	r := &s.rec
	switch r.Kind {
	case mmiotrace.KindRead:
		u.src = mmioSrcR
	case mmiotrace.KindWrite:
		u.src = mmioSrcW
	case mmiotrace.KindUnknown:
		u.src = mmioSrcUnk
	case mmiotrace.KindMark:
		u.src = mmioSrcMark
		if n, ok := r.Lost(); ok {
			u.lost = n
		} else {
			u.mark = r.Text
		}
	case mmiotrace.KindMap, mmiotrace.KindUnmap:
		u.kind, u.src = kindHeader, mmioSrcMap
	case mmiotrace.KindOther:
		u.src = mmioSrcOth
	default:
		u.kind = kindHeader
	}
	switch r.Kind {
	case mmiotrace.KindRead, mmiotrace.KindWrite, mmiotrace.KindUnknown, mmiotrace.KindMark, mmiotrace.KindMap, mmiotrace.KindUnmap:
		if r.Time.NS <= 1<<63-1 {
			u.timed, u.t = true, int64(r.Time.NS)
		}
	}
	return l, nil
}

// rwStamp returns the stamp of an R or W line (the third field, decimal
// seconds with up to 9 fractional digits), false when it is not that.
func rwStamp(b []byte) (int64, bool) {
	i := 2
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 2 || i >= len(b) || b[i] != ' ' {
		return 0, false
	}
	i++
	var sec, frac int64
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' && j-i < 11 {
		sec = sec*10 + int64(b[j]-'0')
		j++
	}
	if j == i || j >= len(b) || b[j] != '.' {
		return 0, false
	}
	j++
	k := j
	scale := int64(1e9)
	for k < len(b) && b[k] >= '0' && b[k] <= '9' && k-j < 9 {
		frac = frac*10 + int64(b[k]-'0')
		scale /= 10
		k++
	}
	if k == j || k >= len(b) || b[k] != ' ' {
		return 0, false
	}
	return sec*1e9 + frac*scale, true
}

// endsCut reports whether l, a line read, is cut short: the input ends
// inside it (no newline) and it is not blank.
func endsCut(l []byte) bool {
	return len(l) > 0 && l[len(l)-1] != '\n' && len(bytes.TrimSpace(l)) > 0
}

// markCut makes u the record of a line the input ends inside (every
// line of the text formats ends with a newline: a capture killed
// mid-write): it stays in place, for the reader to say (a cut line is
// not a whole record), and its record counts as one lost event, at the
// time of the record before it (its own stamp may be cut short).
func markCut(u *unit) {
	u.kind = kindEvent
	u.lost++
	u.timed, u.mark, u.cut = false, nil, true
}

// usbTextScanner reads usbmon '1u'/'1t' text. Its stamps are microseconds
// modulo 4096 s: they are unwrapped (4096 s added at each wrap, a step
// back of less than half the period being jitter, not a wrap).
type usbTextScanner struct {
	base
	last    int64 // unwrapped ns of the last stamp
	hasLast bool
	src     []byte
}

const textWrapNS = 4096 * 1e9

func (s *usbTextScanner) reset(r io.Reader, off int64, last int64) {
	s.base.reset(r, off)
	s.last, s.hasLast = last, last != NoTime
}

func (s *usbTextScanner) next(u *unit) ([]byte, error) {
	l, err := s.line()
	if err != nil {
		return nil, err
	}
	*u = unit{kind: kindEvent}
	if endsCut(l) {
		defer markCut(u)
	}
	// ID STAMP TYPE ADDR ...
	f := bytes.Fields(trimEOL(l))
	if len(f) < 4 {
		if len(f) == 0 || f[0][0] == '#' {
			u.kind = kindHeader
		}
		return l, nil
	}
	us, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil || us >= textWrapNS/1000 {
		return l, nil
	}
	stamp := int64(us) * 1000
	if !s.hasLast {
		s.last, s.hasLast = stamp, true
	} else {
		cur := s.last % textWrapNS
		d := stamp - cur
		if d < -textWrapNS/2 {
			d += textWrapNS
		} else if d > textWrapNS/2 {
			d -= textWrapNS
		}
		s.last += d
	}
	u.timed, u.t = true, s.last
	// Address word: Ci:3:006:0 ('1u') or Ci:006:0 ('1t'): the source is
	// the device, bus:address.
	a := f[3]
	if i := bytes.IndexByte(a, ':'); i >= 0 {
		a = a[i+1:]
		if j := bytes.LastIndexByte(a, ':'); j >= 0 {
			a = a[:j]
		}
	}
	s.src = append(s.src[:0], a...)
	u.src = s.src
	return l, nil
}

// eventsScanner reads user_events NDJSON: one user_event record a line
// with "ts_ns" and "name" (docs/ndjson.md; lines of the shape before
// schema 1 have "ts"); iotap_marker records are markers (their "text"
// field).
type eventsScanner struct {
	base
}

func (s *eventsScanner) reset(r io.Reader, off int64, _ int64) { s.base.reset(r, off) }

var (
	keyTS   = []byte(`"ts":`)
	keyTSNS = []byte(`"ts_ns":`)
	keyName = []byte(`"name":"`)
)

// MarkerEvent is the user event iotap treats as a marker (as package
// timeline names it).
const MarkerEvent = "iotap_marker"

func (s *eventsScanner) next(u *unit) ([]byte, error) {
	l, err := s.line()
	if err != nil {
		return nil, err
	}
	// A line without "ts_ns" or "ts" (the input record, a header or
	// schema line) is kept with its neighbours.
	*u = unit{kind: kindHeader}
	if endsCut(l) {
		defer markCut(u)
	}
	key := keyTSNS
	i := bytes.Index(l, key)
	if i < 0 {
		key = keyTS
		i = bytes.Index(l, key)
	}
	if i >= 0 {
		j := i + len(key)
		for j < len(l) && l[j] == ' ' {
			j++
		}
		k := j
		for k < len(l) && l[k] >= '0' && l[k] <= '9' {
			k++
		}
		if v, err := strconv.ParseUint(string(l[j:k]), 10, 63); err == nil {
			u.kind, u.timed, u.t = kindEvent, true, int64(v)
		}
	}
	if i := bytes.Index(l, keyName); i >= 0 {
		n := l[i+len(keyName):]
		if j := bytes.IndexByte(n, '"'); j >= 0 {
			u.src = n[:j]
		}
	}
	if string(u.src) == MarkerEvent {
		var rec struct {
			Fields struct {
				Text string `json:"text"`
			} `json:"fields"`
		}
		if json.Unmarshal(l, &rec) == nil {
			u.mark = []byte(rec.Fields.Text)
		}
	}
	return l, nil
}
