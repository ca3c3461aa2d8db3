package usbmon

import "encoding/binary"

// sniffBinary reports whether head starts with a raw stream of 48-byte
// binary records, as read(2) returns them from /dev/usbmonN (a copy made
// with cat), and in which byte order. Such a stream has no file header:
// every record that head holds whole must look like one the kernel writes
// (event type, transfer type, device, flags, microseconds, lengths).
func sniffBinary(head []byte) (binary.ByteOrder, bool) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		if plausibleRecords(head, bo) {
			return bo, true
		}
	}
	return nil, false
}

func plausibleRecords(b []byte, bo binary.ByteOrder) bool {
	n := 0
	for len(b) >= HeaderLen48 {
		h := b[:HeaderLen48]
		if !plausibleHeader(h, bo) {
			return false
		}
		n++
		next := HeaderLen48 + int(bo.Uint32(h[36:]))
		if next > len(b) {
			break
		}
		b = b[next:]
	}
	return n > 0
}

// plausibleHeader checks the fields of a binary header that take few
// values (mon_bin.c's mon_bin_event and mon_bin_error).
func plausibleHeader(h []byte, bo binary.ByteOrder) bool {
	switch EventType(h[8]) {
	case Submission, Callback, SubmitError:
	default:
		return false
	}
	if h[9] > 3 || h[11] > 127 {
		return false
	}
	switch h[14] { // setup flag: 0 (setup follows), 'Z', '-'
	case 0, 'Z', '-':
	default:
		return false
	}
	switch h[15] { // data flag: 0 (data follows) or why not
	case 0, '<', '>', 'Z', 'D', 'E':
	default:
		return false
	}
	usec := int32(bo.Uint32(h[24:]))
	return usec >= 0 && usec < 1000000 &&
		bo.Uint64(h[16:])>>40 == 0 && // seconds since 1970
		bo.Uint32(h[36:]) <= maxRecord
}
