package mmiotrace

import "math/bits"

// accessRoom is the room appendAccessLines makes before each record: an
// mmio_access record without "func" (accessMax) plus the 16 bytes its
// fixed-size copies may write past a field's last digit.
const accessRoom = accessMax + 16

// appendAccessLines is the hot path of 'mmio read --json'
// (ConvertOptions.AccessNDJSON): it writes the mmio_access records of the
// R/W lines at the start of data straight from the lines' bytes, without
// converting a number or filling a Record. A line qualifies when it has
// the kernel's usual form, the one parseRWFast takes ("R|W <w>
// <sec>.<6 digits> <id> 0x<hex> 0x<hex> 0x<hex> <pid>\n", 1 to 7 digits
// of seconds, map id and PID, 1 to 16 digits or lower-case letters per
// hex field), checked field by field a word at a time as parseRWFast
// does, and its numbers are written as NDJSONEncoder writes them (no
// leading zero in the seconds, the map id or a hex field; seconds not
// 0): then the record's digits are the line's, copied. It stops at the
// first line that does not qualify or that starts in the last rwFastLen
// bytes of data; the caller formats that one from its Record.
//
// It returns the bytes and lines taken and out with their records
// appended: the bytes NDJSONEncoder.Append writes for the records
// parseRWFast fills from the same lines (TestAccessLinesMatchEncoder,
// FuzzAccessLines).
func appendAccessLines(data, out []byte) (int, int64, []byte) {
	var lines int64
	p := 0
	for p <= len(data)-rwFastLen {
		a := (*rwWindow)(data[p:])
		w := a[2] - '0'
		if (a[0] != 'R' && a[0] != 'W') || a[1] != ' ' || w > 8 || (0x116>>w)&1 == 0 || a[3] != ' ' {
			break
		}
		// Seconds: 1 to 7 digits, the first not 0, then '.'.
		x := le64(a, 4)
		secn := bits.TrailingZeros64(nonDigitMask(x)) >> 3
		if secn == 0 || secn == 8 || byte(x>>(8*secn)) != '.' || byte(x) == '0' {
			break
		}
		// ".dddddd ".
		us := 4 + secn
		if y := le64(a, us); byte(y>>56) != ' ' || nonDigitMask(y)&0x0080808080808000 != 0 {
			break
		}
		us++
		// Map id: 1 to 7 digits (no leading zero), then a space.
		id := us + 7
		x = le64(a, id)
		idn := bits.TrailingZeros64(nonDigitMask(x)) >> 3
		if idn == 0 || idn == 8 || byte(x>>(8*idn)) != ' ' || (idn > 1 && byte(x) == '0') {
			break
		}
		phys := id + idn + 3
		physn := hexSpan(a, phys-2)
		val := phys + physn + 3
		valn := hexSpan(a, val-2)
		pc := val + valn + 3
		pcn := hexSpan(a, pc-2)
		if physn == 0 || valn == 0 || pcn == 0 {
			break
		}
		// PID: 1 to 7 digits, then the newline.
		x = le64(a, pc+pcn+1)
		pidn := bits.TrailingZeros64(nonDigitMask(x)) >> 3
		if pidn == 0 || pidn == 8 || byte(x>>(8*pidn)) != '\n' {
			break
		}
		if cap(out)-len(out) < accessRoom {
			out = append(out, make([]byte, accessRoom)...)[:len(out)]
		}
		n := len(out)
		d := out[n : n+accessRoom]
		if a[0] == 'R' {
			*(*[len(accessR)]byte)(d) = accessR
		} else {
			*(*[len(accessW)]byte)(d) = accessW
		}
		i := len(accessR)
		d[i] = a[2]
		i++
		*(*[len(tsKey)]byte)(d[i:]) = tsKey
		i += len(tsKey)
		// ts_ns: the seconds, the six digits of microseconds, "000".
		*(*[8]byte)(d[i:]) = *(*[8]byte)(a[4:])
		i += secn
		*(*[8]byte)(d[i:]) = *(*[8]byte)(a[us&15:])
		i += 6
		d[i], d[i+1], d[i+2] = '0', '0', '0'
		i += 3
		*(*[len(mapKey)]byte)(d[i:]) = mapKey
		i += len(mapKey)
		*(*[8]byte)(d[i:]) = *(*[8]byte)(a[id&31:])
		i += idn
		*(*[len(physKey)]byte)(d[i:]) = physKey
		i += len(physKey)
		*(*[16]byte)(d[i:]) = *(*[16]byte)(a[phys&31:])
		i += physn
		*(*[len(valKey)]byte)(d[i:]) = valKey
		i += len(valKey)
		*(*[16]byte)(d[i:]) = *(*[16]byte)(a[val&63:])
		i += valn
		if pcn == 1 && at(a, pc) == '0' {
			*(*[len(pcNull)]byte)(d[i:]) = pcNull // a PC of 0: not recorded
			i += len(pcNull)
		} else {
			*(*[len(pcKey)]byte)(d[i:]) = pcKey
			i += len(pcKey)
			*(*[16]byte)(d[i:]) = *(*[16]byte)(a[pc&127:])
			i += pcn
			d[i] = '"'
			i++
		}
		d[i], d[i+1] = '}', '\n'
		out = out[:n+i+2]
		p += pc + pcn + pidn + 2
		lines++
	}
	return p, lines, out
}

// hexSpan returns the number of digits of the "0x<hex> " field at a[i:]
// (1 to 16 digits or lower-case letters, as hex0xSpFast takes), or 0 if
// it is not one or has a leading zero (a single "0" is fine). It reads
// a[i:i+19].
func hexSpan(a *rwWindow, i int) int {
	if le16(a, i) != 'x'<<8|'0' {
		return 0
	}
	x := le64(a, i+2)
	n := 0
	if m := nonHexMask(x); m != 0 {
		n = bits.TrailingZeros64(m) >> 3
		if n == 0 || byte(x>>(8*n)) != ' ' {
			return 0
		}
	} else {
		y := le64(a, i+10)
		m := nonHexMask(y)
		if m == 0 {
			if at(a, i+18) != ' ' {
				return 0
			}
			n = 16
		} else {
			k := bits.TrailingZeros64(m) >> 3
			if byte(y>>(8*k)) != ' ' {
				return 0
			}
			n = 8 + k
		}
	}
	if n > 1 && byte(x) == '0' {
		return 0
	}
	return n
}
