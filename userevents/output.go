package userevents

import (
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends rec as one JSON object (no newline):
// {"name":…,"ts":…,"cpu":…,"pid":…,"fields":{"a":1,"b":"hi"}}. ts is
// the trace clock in nanoseconds; byte fields that are not text are hex.
func AppendJSON(dst []byte, rec *Recorded) []byte {
	if rec.EventHeader != nil {
		return appendEventHeaderJSON(dst, rec)
	}
	dst = append(dst, `{"name":`...)
	dst = appendJSONString(dst, rec.Name)
	if rec.System != System && rec.System != "" {
		dst = append(dst, `,"system":`...)
		dst = appendJSONString(dst, rec.System)
	}
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendUint(dst, rec.TS, 10)
	dst = append(dst, `,"cpu":`...)
	dst = strconv.AppendInt(dst, int64(rec.CPU), 10)
	dst = append(dst, `,"pid":`...)
	dst = strconv.AppendInt(dst, int64(rec.PID), 10)
	dst = append(dst, `,"fields":{`...)
	for i, v := range rec.Values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, v.Field.Name)
		dst = append(dst, ':')
		switch {
		case v.Field.Kind == KindInt:
			dst = strconv.AppendInt(dst, v.Int, 10)
		case v.Field.Kind == KindUint:
			dst = strconv.AppendUint(dst, v.Uint, 10)
		case v.Field.String:
			dst = appendJSONString(dst, string(v.Bytes))
		default:
			dst = append(dst, '"')
			dst = hex.AppendEncode(dst, v.Bytes)
			dst = append(dst, '"')
		}
	}
	return append(dst, "}}"...)
}

// AppendText appends rec as one human-readable line (no newline):
// "SECONDS.NANOS [CPU] PID NAME: a=1 b="hi"".
func AppendText(dst []byte, rec *Recorded) []byte {
	if rec.EventHeader != nil {
		return appendEventHeaderText(dst, rec)
	}
	dst = strconv.AppendUint(dst, rec.TS/1e9, 10)
	dst = append(dst, '.')
	ns := strconv.AppendUint(nil, rec.TS%1e9, 10)
	for i := len(ns); i < 9; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, ns...)
	dst = append(dst, " ["...)
	c := strconv.AppendInt(nil, int64(rec.CPU), 10)
	for i := len(c); i < 3; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, c...)
	dst = append(dst, "] "...)
	dst = strconv.AppendInt(dst, int64(rec.PID), 10)
	dst = append(dst, ' ')
	dst = append(dst, rec.Name...)
	dst = append(dst, ':')
	for _, v := range rec.Values {
		dst = append(dst, ' ')
		dst = append(dst, v.Field.Name...)
		dst = append(dst, '=')
		switch {
		case v.Field.Kind == KindInt:
			dst = strconv.AppendInt(dst, v.Int, 10)
		case v.Field.Kind == KindUint:
			dst = strconv.AppendUint(dst, v.Uint, 10)
		case v.Field.String:
			dst = strconv.AppendQuote(dst, string(v.Bytes))
		default:
			dst = hex.AppendEncode(dst, v.Bytes)
		}
	}
	return dst
}

func appendJSONString(dst []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
