package eventheader

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"net/netip"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Meta is what the recorder knows about an event besides its data.
type Meta struct {
	TS uint64 // trace clock, nanoseconds
	// Wall is the wall-clock time of the event in nanoseconds since the
	// Unix epoch, 0 when unknown; printed as "time" in RFC 3339 with
	// nanoseconds, as perf-decode does.
	Wall     int64
	CPU      int
	PID, TID int32
}

// AppendJSON appends ev as one JSON object in the shape of LinuxTracepoints'
// decoder (perf-decode): {"n":"Provider:Event", fields…, "meta":{…}}, with
// the same value formatting (hex integers "0x1F", errno "ENOENT(2)", times,
// UUIDs, IP addresses, hex bytes "01 02", arrays, structs). meta holds "ts"
// (the trace clock in nanoseconds), "time" (wall clock, as perf-decode
// writes it) when m.Wall is known, then cpu, pid, tid and the header's id, version, level, keyword,
// opcode, tag and activity ids when set (like perf-decode, not the
// tracepoint name's options). An event without metadata has
// its payload as "payload" (hex bytes).
func AppendJSON(dst []byte, ev *Event, m Meta) []byte {
	dst = append(dst, `{"n":`...)
	dst = appendString(dst, ev.Name.Provider+":"+ev.EventName)
	for i := range ev.Fields {
		dst = append(dst, ',')
		dst = appendMember(dst, &ev.Fields[i])
	}
	if !ev.HasMetadata {
		dst = append(dst, `,"payload":`...)
		dst = appendHexBytes(dst, ev.Payload)
	}
	dst = append(dst, `,"meta":{"ts":`...)
	dst = strconv.AppendUint(dst, m.TS, 10)
	if m.Wall != 0 {
		dst = append(dst, `,"time":"`...)
		dst = time.Unix(0, m.Wall).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000000Z")
		dst = append(dst, '"')
	}
	dst = append(dst, `,"cpu":`...)
	dst = strconv.AppendInt(dst, int64(m.CPU), 10)
	dst = append(dst, `,"pid":`...)
	dst = strconv.AppendInt(dst, int64(m.PID), 10)
	dst = append(dst, `,"tid":`...)
	dst = strconv.AppendInt(dst, int64(m.TID), 10)
	h := &ev.Header
	num := func(k string, v uint64) {
		dst = append(dst, `,"`...)
		dst = append(dst, k...)
		dst = append(dst, `":`...)
		dst = strconv.AppendUint(dst, v, 10)
	}
	if h.ID != 0 {
		num("id", uint64(h.ID))
	}
	if h.Version != 0 {
		num("version", uint64(h.Version))
	}
	if h.Level != 0 {
		num("level", uint64(h.Level))
	}
	if ev.Name.Keyword != 0 {
		dst = append(dst, `,"keyword":"0x`...)
		dst = appendUpperHex(dst, ev.Name.Keyword)
		dst = append(dst, '"')
	}
	if h.Opcode != 0 {
		num("opcode", uint64(h.Opcode))
	}
	if h.Tag != 0 {
		dst = append(dst, `,"tag":"0x`...)
		dst = appendUpperHex(dst, uint64(h.Tag))
		dst = append(dst, '"')
	}
	if ev.Activity != nil {
		dst = append(dst, `,"activity":`...)
		dst = appendUUID(dst, ev.Activity)
	}
	if ev.RelatedActivity != nil {
		dst = append(dst, `,"relatedActivity":`...)
		dst = appendUUID(dst, ev.RelatedActivity)
	}
	return append(dst, "}}"...)
}

// AppendMember appends "name":value for f (field tags are not shown, as
// perf-decode does by default).
func AppendMember(dst []byte, f *Field) []byte { return appendMember(dst, f) }

func appendMember(dst []byte, f *Field) []byte {
	dst = appendString(dst, f.Name)
	dst = append(dst, ':')
	return appendField(dst, f)
}

// AppendFieldValue appends f's JSON value: a scalar or string, an array
// ([…]) or a struct ({…}).
func AppendFieldValue(dst []byte, f *Field) []byte { return appendField(dst, f) }

func appendField(dst []byte, f *Field) []byte {
	switch {
	case f.Array:
		dst = append(dst, '[')
		for i := range f.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendField(dst, &f.Elems[i])
		}
		return append(dst, ']')
	case f.Encoding == EncStruct:
		dst = append(dst, '{')
		for i := range f.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMember(dst, &f.Members[i])
		}
		return append(dst, '}')
	}
	return AppendValue(dst, f)
}

// AppendValue appends the JSON value of a scalar or string field.
func AppendValue(dst []byte, f *Field) []byte {
	b := f.Data
	switch f.Encoding {
	case EncValue8, EncValue16, EncValue32, EncValue64, EncValue128:
		return appendFixed(dst, f, b)
	case EncStringLength16Char8, EncBinaryLength16Char8:
		switch f.Format {
		case FmtDefault:
			if f.Encoding == EncBinaryLength16Char8 {
				return appendHexBytes(dst, b)
			}
			return appendString(dst, string(b))
		case FmtHexBytes:
			return appendHexBytes(dst, b)
		case FmtString8:
			return appendLatin1(dst, b)
		case FmtStringUTF, FmtStringUTFBOM, FmtStringXML, FmtStringJSON:
			return appendUnits(dst, b, 1, f.BigEndian, f.Format != FmtStringUTF)
		}
		if len(b) == 0 {
			return append(dst, "null"...)
		}
		if fixedOK(f.Format, len(b)) {
			return appendFixed(dst, f, b)
		}
		return appendHexBytes(dst, b)
	}
	// Character strings of 1, 2 or 4-byte units.
	unit := unitSize(f.Encoding)
	switch f.Format {
	case FmtHexBytes:
		return appendHexBytes(dst, b)
	case FmtString8:
		if unit == 1 {
			return appendLatin1(dst, b)
		}
	}
	return appendUnits(dst, b, unit, f.BigEndian, f.Format == FmtStringUTFBOM || f.Format == FmtStringXML || f.Format == FmtStringJSON)
}

// fixedOK reports whether a variable-length value of n bytes can be shown
// with format fm as the fixed-size value of that size.
func fixedOK(fm uint8, n int) bool {
	switch fm {
	case FmtUnsignedInt, FmtSignedInt, FmtHexInt:
		return n == 1 || n == 2 || n == 4 || n == 8
	case FmtErrno, FmtPID:
		return n == 4
	case FmtTime:
		return n == 4 || n == 8
	case FmtBoolean:
		return n == 1 || n == 2 || n == 4
	case FmtFloat:
		return n == 4 || n == 8
	case FmtUUID:
		return n == 16
	case FmtPort:
		return n == 2
	case FmtIPAddress, FmtIPAddressObsolete:
		return n == 4 || n == 16
	}
	return false
}

func appendFixed(dst []byte, f *Field, b []byte) []byte {
	var bo binary.ByteOrder = binary.LittleEndian
	if f.BigEndian {
		bo = binary.BigEndian
	}
	n := len(b)
	var u uint64
	var s int64
	switch n {
	case 1:
		u, s = uint64(b[0]), int64(int8(b[0]))
	case 2:
		v := bo.Uint16(b)
		u, s = uint64(v), int64(int16(v))
	case 4:
		v := bo.Uint32(b)
		u, s = uint64(v), int64(int32(v))
	case 8:
		u = bo.Uint64(b)
		s = int64(u)
	default:
		switch f.Format {
		case FmtUUID:
			return appendUUID(dst, b)
		case FmtIPAddress, FmtIPAddressObsolete:
			return appendIP(dst, b)
		}
		return appendHexBytes(dst, b)
	}
	switch f.Format {
	case FmtSignedInt, FmtPID:
		return strconv.AppendInt(dst, s, 10)
	case FmtHexInt:
		dst = append(dst, `"0x`...)
		dst = appendUpperHex(dst, u)
		return append(dst, '"')
	case FmtErrno:
		e := int32(s)
		dst = append(dst, '"')
		if e > 0 && int(e) < len(errnoNames) && errnoNames[e] != "" {
			dst = append(dst, errnoNames[e]...)
		} else {
			dst = append(dst, "ERRNO"...)
		}
		dst = append(dst, '(')
		dst = strconv.AppendInt(dst, int64(e), 10)
		return append(dst, ')', '"')
	case FmtTime:
		if n == 8 && f.Format == FmtTime {
			return appendTime(dst, s)
		}
		return appendTime(dst, s)
	case FmtBoolean:
		if u <= 1 {
			return strconv.AppendBool(dst, u == 1)
		}
		if n == 4 {
			return strconv.AppendInt(dst, s, 10)
		}
		return strconv.AppendUint(dst, u, 10)
	case FmtFloat:
		if n == 4 {
			return appendFloat(dst, float64(math.Float32frombits(uint32(u))), 32)
		}
		if n == 8 {
			return appendFloat(dst, math.Float64frombits(u), 64)
		}
	case FmtHexBytes:
		return appendHexBytes(dst, b)
	case FmtString8:
		if n == 1 {
			return appendLatin1(dst, b)
		}
	case FmtStringUTF:
		if n == 2 || n == 4 {
			return appendString(dst, string(rune(u)))
		}
	case FmtPort:
		if n == 2 {
			return strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(b)), 10)
		}
	case FmtIPAddress, FmtIPAddressObsolete:
		if n == 4 {
			return appendIP(dst, b)
		}
	}
	return strconv.AppendUint(dst, u, 10)
}

// appendTime writes seconds since 1970 as UTC "YYYY-MM-DDThh:mm:ss" while
// the year minus 1900 fits an int32 (gmtime's range, as perf-decode on
// Linux), else as "TIME(n)".
func appendTime(dst []byte, sec int64) []byte {
	const lim = 67767976233316800 // beyond this many seconds either way the year does not fit
	if sec < -lim || sec > lim {
		dst = append(dst, `"TIME(`...)
		dst = strconv.AppendInt(dst, sec, 10)
		return append(dst, `)"`...)
	}
	t := time.Unix(sec, 0).UTC()
	y := int64(t.Year())
	if y-1900 > math.MaxInt32 || y-1900 < math.MinInt32 {
		dst = append(dst, `"TIME(`...)
		dst = strconv.AppendInt(dst, sec, 10)
		return append(dst, `)"`...)
	}
	dst = append(dst, '"')
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	for d := int64(1000); d > 1 && y < d; d /= 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, y, 10)
	dst = t.AppendFormat(dst, "-01-02T15:04:05")
	return append(dst, '"')
}

func appendFloat(dst []byte, v float64, bits int) []byte {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return append(dst, `"-nan"`...)
		}
		return append(dst, `"nan"`...)
	case math.IsInf(v, 1):
		return append(dst, `"inf"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-inf"`...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, bits)
}

func appendUpperHex(dst []byte, v uint64) []byte {
	const digits = "0123456789ABCDEF"
	var buf [16]byte
	i := len(buf)
	for {
		i--
		buf[i] = digits[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}

func appendHexBytes(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = hex.AppendEncode(dst, []byte{c})
	}
	return append(dst, '"')
}

func appendUUID(dst []byte, b []byte) []byte {
	if len(b) != 16 {
		return appendHexBytes(dst, b)
	}
	dst = append(dst, '"')
	dst = hex.AppendEncode(dst, b[0:4])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, b[4:6])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, b[6:8])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, b[8:10])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, b[10:16])
	return append(dst, '"')
}

func appendIP(dst []byte, b []byte) []byte {
	a, ok := netip.AddrFromSlice(b)
	if !ok {
		return appendHexBytes(dst, b)
	}
	dst = append(dst, '"')
	dst = a.AppendTo(dst)
	return append(dst, '"')
}

func appendLatin1(dst []byte, b []byte) []byte {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return appendString(dst, string(r))
}

// appendUnits appends a string of unit-byte code units (UTF-8, UTF-16 or
// UTF-32), skipping a byte-order mark when bom is set (and following it).
func appendUnits(dst []byte, b []byte, unit int, big, bom bool) []byte {
	var bo binary.ByteOrder = binary.LittleEndian
	if big {
		bo = binary.BigEndian
	}
	switch unit {
	case 1:
		if bom && len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
			b = b[3:]
		}
		return appendString(dst, string(b))
	case 2:
		if bom && len(b) >= 2 {
			switch {
			case b[0] == 0xff && b[1] == 0xfe:
				bo, b = binary.LittleEndian, b[2:]
			case b[0] == 0xfe && b[1] == 0xff:
				bo, b = binary.BigEndian, b[2:]
			}
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = bo.Uint16(b[2*i:])
		}
		return appendString(dst, string(utf16.Decode(u)))
	}
	if bom && len(b) >= 4 {
		switch {
		case b[0] == 0xff && b[1] == 0xfe && b[2] == 0 && b[3] == 0:
			bo, b = binary.LittleEndian, b[4:]
		case b[0] == 0 && b[1] == 0 && b[2] == 0xfe && b[3] == 0xff:
			bo, b = binary.BigEndian, b[4:]
		}
	}
	r := make([]rune, len(b)/4)
	for i := range r {
		r[i] = rune(bo.Uint32(b[4*i:]))
	}
	return appendString(dst, string(r))
}

func appendString(dst []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

// AppendUUID appends an activity id as JSON: a UUID string
// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (16 bytes), else hex bytes.
func AppendUUID(dst []byte, b []byte) []byte { return appendUUID(dst, b) }
