package userevents

import (
	"encoding/hex"
	"strconv"
)

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
