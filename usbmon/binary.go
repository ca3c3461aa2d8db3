package usbmon

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Sizes of the binary API's records.
const (
	// HeaderLen48 is the usbmon_packet header of read(2), MON_IOCX_GET and
	// link type 189.
	HeaderLen48 = 48
	// HeaderLen64 is the header of MON_IOCX_GETX, mmap and link type 220.
	HeaderLen64 = 64
	// ISODescLen is the size of one ISO descriptor after a 64-byte header.
	ISODescLen = 16
	// maxISODesc is the kernel's limit of descriptors per event.
	maxISODesc = 128
)

// Filler is the type of the padding records the kernel places in the mmap
// ring when an event would wrap; readers skip them.
const Filler EventType = '@'

// DecodeHeader decodes a usbmon_packet header of hdrLen bytes (48 or 64)
// at the start of b, in byte order bo, into ev. Data, ISO and the Format
// of ev are left alone. It returns an error (never panics) when b is short.
func DecodeHeader(b []byte, hdrLen int, bo binary.ByteOrder, ev *Event) error {
	return decodeHeader(b, hdrLen, orderOf(bo), ev)
}

// byteOrder reads integers in one byte order: binary.LittleEndian and
// BigEndian directly (the calls inline; through the interface they do not,
// which cost a tenth of reading a pcapng), any other ByteOrder through it.
type byteOrder struct {
	bo   binary.ByteOrder
	kind uint8 // 1 little, 2 big, 0 through bo
}

func orderOf(bo binary.ByteOrder) byteOrder {
	switch bo {
	case binary.ByteOrder(binary.LittleEndian):
		return byteOrder{bo, 1}
	case binary.ByteOrder(binary.BigEndian):
		return byteOrder{bo, 2}
	}
	return byteOrder{bo, 0}
}

func (o byteOrder) u16(b []byte) uint16 {
	if o.kind == 1 {
		return binary.LittleEndian.Uint16(b)
	}
	return o.slow16(b)
}

func (o byteOrder) u32(b []byte) uint32 {
	if o.kind == 1 {
		return binary.LittleEndian.Uint32(b)
	}
	return o.slow32(b)
}

func (o byteOrder) u64(b []byte) uint64 {
	if o.kind == 1 {
		return binary.LittleEndian.Uint64(b)
	}
	return o.slow64(b)
}

//go:noinline
func (o byteOrder) slow16(b []byte) uint16 {
	if o.kind == 2 {
		return binary.BigEndian.Uint16(b)
	}
	return o.bo.Uint16(b)
}

//go:noinline
func (o byteOrder) slow32(b []byte) uint32 {
	if o.kind == 2 {
		return binary.BigEndian.Uint32(b)
	}
	return o.bo.Uint32(b)
}

//go:noinline
func (o byteOrder) slow64(b []byte) uint64 {
	if o.kind == 2 {
		return binary.BigEndian.Uint64(b)
	}
	return o.bo.Uint64(b)
}

func decodeHeader(b []byte, hdrLen int, bo byteOrder, ev *Event) error {
	if hdrLen != HeaderLen48 && hdrLen != HeaderLen64 {
		return fmt.Errorf("usbmon: header length %d (want 48 or 64): %w", hdrLen, ErrFormat)
	}
	if len(b) < hdrLen {
		return fmt.Errorf("usbmon: %d-byte header needs %d bytes, have %d: %w", hdrLen, hdrLen, len(b), ErrTruncated)
	}
	if bo.kind == 1 {
		decodeHeaderLE((*[HeaderLen48]byte)(b), hdrLen == HeaderLen64, b, ev)
		return nil
	}
	b = b[:hdrLen]
	ev.ID = bo.u64(b[0:])
	ev.Type = EventType(b[8])
	ev.Transfer = TransferType(b[9])
	ev.In = b[10]&0x80 != 0
	ev.Endpoint = b[10] & 0x7f
	ev.Device = b[11]
	ev.Bus = bo.u16(b[12:])
	ev.SetupFlag = b[14]
	ev.DataFlag = b[15]
	ev.Sec = int64(bo.u64(b[16:]))
	ev.Usec = int32(bo.u32(b[24:]))
	ev.Status = int32(bo.u32(b[28:]))
	ev.Length = bo.u32(b[32:])
	ev.CapLen = bo.u32(b[36:])
	if ev.Transfer == Isochronous {
		ev.ErrorCount = int32(bo.u32(b[40:]))
		ev.NumDesc = int32(bo.u32(b[44:]))
		ev.Setup = [8]byte{}
	} else {
		copy(ev.Setup[:], b[40:48])
		ev.ErrorCount, ev.NumDesc = 0, 0
	}
	ev.Fields = HasWallClock | HasBus | HasLengths
	ev.TextStamp = 0
	ev.Interval, ev.StartFrame, ev.XferFlags, ev.NDesc = 0, 0, 0, 0
	if hdrLen == HeaderLen64 {
		ev.Interval = int32(bo.u32(b[48:]))
		ev.StartFrame = int32(bo.u32(b[52:]))
		ev.XferFlags = bo.u32(b[56:])
		ev.NDesc = bo.u32(b[60:])
		ev.Fields |= HasExtended
	}
	return nil
}

// decodeHeaderLE is decodeHeader for little-endian headers (every capture
// made on x86 and arm64), reading from a fixed-size array so that no load
// has a bounds check or a byte-order test; b is the whole record (at least
// 64 bytes when ext).
func decodeHeaderLE(h *[HeaderLen48]byte, ext bool, b []byte, ev *Event) {
	le := binary.LittleEndian
	ev.ID = le.Uint64(h[0:8])
	ev.Type = EventType(h[8])
	ev.Transfer = TransferType(h[9])
	ev.In = h[10]&0x80 != 0
	ev.Endpoint = h[10] & 0x7f
	ev.Device = h[11]
	ev.Bus = le.Uint16(h[12:14])
	ev.SetupFlag = h[14]
	ev.DataFlag = h[15]
	ev.Sec = int64(le.Uint64(h[16:24]))
	ev.Usec = int32(le.Uint32(h[24:28]))
	ev.Status = int32(le.Uint32(h[28:32]))
	ev.Length = le.Uint32(h[32:36])
	ev.CapLen = le.Uint32(h[36:40])
	if ev.Transfer == Isochronous {
		ev.ErrorCount = int32(le.Uint32(h[40:44]))
		ev.NumDesc = int32(le.Uint32(h[44:48]))
		ev.Setup = [8]byte{}
	} else {
		ev.Setup = [8]byte(h[40:48])
		ev.ErrorCount, ev.NumDesc = 0, 0
	}
	ev.TextStamp = 0
	if ext {
		x := (*[HeaderLen64]byte)(b)
		ev.Interval = int32(le.Uint32(x[48:52]))
		ev.StartFrame = int32(le.Uint32(x[52:56]))
		ev.XferFlags = le.Uint32(x[56:60])
		ev.NDesc = le.Uint32(x[60:64])
		ev.Fields = HasWallClock | HasBus | HasLengths | HasExtended
		return
	}
	ev.Interval, ev.StartFrame, ev.XferFlags, ev.NDesc = 0, 0, 0, 0
	ev.Fields = HasWallClock | HasBus | HasLengths
}

// DecodePacket decodes a whole binary record: header, then (64-byte
// headers only) ev.NDesc ISO descriptors, then data. iso is the buffer for
// the descriptors (its capacity is reused); ev.Data aliases b.
func DecodePacket(b []byte, hdrLen int, bo binary.ByteOrder, ev *Event, iso []ISODesc) error {
	return decodePacket(b, hdrLen, orderOf(bo), ev, iso)
}

func decodePacket(b []byte, hdrLen int, bo byteOrder, ev *Event, iso []ISODesc) error {
	if err := decodeHeader(b, hdrLen, bo, ev); err != nil {
		return err
	}
	rest := b[hdrLen:]
	iso = iso[:0]
	if hdrLen == HeaderLen64 && ev.NDesc > 0 {
		if ev.NDesc > maxISODesc {
			return fmt.Errorf("usbmon: %d ISO descriptors (kernel limit %d): %w", ev.NDesc, maxISODesc, ErrFormat)
		}
		need := int(ev.NDesc) * ISODescLen
		if len(rest) < need {
			return fmt.Errorf("usbmon: %d ISO descriptors need %d bytes, have %d: %w", ev.NDesc, need, len(rest), ErrTruncated)
		}
		for i := 0; i < int(ev.NDesc); i++ {
			d := rest[i*ISODescLen:]
			iso = append(iso, ISODesc{Status: int32(bo.u32(d)), Offset: bo.u32(d[4:]), Length: bo.u32(d[8:])})
		}
		rest = rest[need:]
	}
	ev.ISO = iso
	ev.Data = rest
	return nil
}

// AppendPacket appends ev as a binary record (header of hdrLen bytes, ISO
// descriptors for 64-byte headers, data) in byte order bo. Losses (what a
// 48-byte header cannot hold) are counted into loss if not nil.
func AppendPacket(b []byte, ev *Event, hdrLen int, bo binary.ByteOrder, loss *Loss) []byte {
	var h [HeaderLen64]byte
	bo.PutUint64(h[0:], ev.ID)
	h[8] = byte(ev.Type)
	h[9] = byte(ev.Transfer)
	h[10] = ev.Endpoint & 0x7f
	if ev.In {
		h[10] |= 0x80
	}
	h[11] = ev.Device
	bo.PutUint16(h[12:], ev.Bus)
	h[14] = ev.SetupFlag
	h[15] = binaryDataFlag(ev)
	sec, usec := ev.Sec, ev.Usec
	if ev.Fields&HasWallClock == 0 { // text: its own stamp is all we have
		sec, usec = int64(ev.TextStamp/1000000), int32(ev.TextStamp%1000000)
	}
	bo.PutUint64(h[16:], uint64(sec))
	bo.PutUint32(h[24:], uint32(usec))
	bo.PutUint32(h[28:], uint32(ev.Status))
	bo.PutUint32(h[32:], ev.Length)
	iso := ev.ISO
	if hdrLen == HeaderLen48 {
		if len(iso) > 0 {
			loss.add(LossISO)
		}
		if ev.Interval != 0 || ev.StartFrame != 0 || ev.XferFlags != 0 {
			loss.add(LossExtended)
		}
		iso = nil
	}
	if len(iso) > maxISODesc {
		iso = iso[:maxISODesc]
		loss.add(LossISO)
	}
	capLen := uint32(len(iso)*ISODescLen + len(ev.Data))
	if ev.Fields&HasLengths != 0 && ev.CapLen > capLen && len(iso) == len(ev.ISO) {
		capLen = ev.CapLen // a record cut by a snap length stays as it was
	}
	bo.PutUint32(h[36:], capLen)
	if ev.Transfer == Isochronous {
		bo.PutUint32(h[40:], uint32(ev.ErrorCount))
		bo.PutUint32(h[44:], uint32(ev.NumDesc))
	} else {
		copy(h[40:48], ev.Setup[:])
	}
	if hdrLen == HeaderLen64 {
		bo.PutUint32(h[48:], uint32(ev.Interval))
		bo.PutUint32(h[52:], uint32(ev.StartFrame))
		bo.PutUint32(h[56:], ev.XferFlags)
		bo.PutUint32(h[60:], uint32(len(iso)))
		b = append(b, h[:]...)
		for _, d := range iso {
			var x [ISODescLen]byte
			bo.PutUint32(x[0:], uint32(d.Status))
			bo.PutUint32(x[4:], d.Offset)
			bo.PutUint32(x[8:], d.Length)
			b = append(b, x[:]...)
		}
	} else {
		b = append(b, h[:HeaderLen48]...)
	}
	return append(b, ev.Data...)
}

// binaryDataFlag maps the text-only 'L' (zero length) to what the binary
// API reports for a zero-length event.
func binaryDataFlag(ev *Event) byte {
	if ev.DataFlag != 'L' || ev.Fields&HasLengths != 0 {
		return ev.DataFlag
	}
	switch {
	case ev.In && ev.Type == Submission:
		return '<'
	case !ev.In && ev.Type == Callback:
		return '>'
	}
	return DataPresent
}

func (l *Loss) add(r LossReason) {
	if l != nil {
		l.n[r]++
	}
}

// binaryReader reads a raw stream of binary records as read(2) returns
// them from /dev/usbmonN (48-byte headers) or as MON_IOCX_GETX lays them
// out (64-byte headers, ISO descriptors, data).
type binaryReader struct {
	br     *bufio.Reader
	hdrLen int
	bo     binary.ByteOrder
	off    int64
	n      int
	buf    []byte
	iso    []ISODesc
}

// NewBinaryReader reads a raw stream of usbmon records, e.g. a copy of
// /dev/usbmon0 made with cat (hdrLen 48, host byte order). Such a stream has
// no file header: NewReader recognises one with 48-byte records from the
// plausibility of its first records.
func NewBinaryReader(r io.Reader, hdrLen int, bo binary.ByteOrder) (Reader, error) {
	if hdrLen != HeaderLen48 && hdrLen != HeaderLen64 {
		return nil, fmt.Errorf("usbmon: header length %d (want 48 or 64): %w", hdrLen, ErrFormat)
	}
	return &binaryReader{br: bufio.NewReaderSize(r, 1<<16), hdrLen: hdrLen, bo: bo,
		buf: make([]byte, 0, 4096), iso: make([]ISODesc, 0, 8)}, nil
}

func (r *binaryReader) Format() Format { return FormatBinary }

func (r *binaryReader) Read() (*Event, error) {
	var ev Event
	if err := r.ReadInto(&ev); err != nil {
		return nil, err
	}
	return ev.Clone(), nil
}

func (r *binaryReader) ReadInto(ev *Event) error {
	off := r.off
	if cap(r.buf) < r.hdrLen {
		r.buf = make([]byte, 0, 4096)
	}
	h := r.buf[:r.hdrLen]
	n, err := io.ReadFull(r.br, h)
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return &FormatError{Format: FormatBinary, Offset: off, Msg: fmt.Sprintf("record %d: header cut short after %d bytes", r.n+1, n), Err: ErrTruncated}
	}
	capLen := r.bo.Uint32(h[36:])
	if capLen > maxRecord {
		return &FormatError{Format: FormatBinary, Offset: off, Msg: fmt.Sprintf("record %d: len_cap %d is implausible", r.n+1, capLen), Err: ErrFormat}
	}
	total := r.hdrLen + int(capLen)
	if cap(r.buf) < total {
		nb := make([]byte, total)
		copy(nb, h)
		r.buf = nb[:0]
	}
	rec := r.buf[:total]
	if n, err := io.ReadFull(r.br, rec[r.hdrLen:]); err != nil {
		return &FormatError{Format: FormatBinary, Offset: off, Msg: fmt.Sprintf("record %d: %d of %d data bytes", r.n+1, n, capLen), Err: ErrTruncated}
	}
	r.n++
	r.off += int64(total)
	if err := decodeRecord(rec, r.hdrLen, r.bo, ev, &r.iso); err != nil {
		return &FormatError{Format: FormatBinary, Offset: off, Msg: fmt.Sprintf("record %d: %s", r.n, recordDetail(err)), Err: unwrapSentinel(err)}
	}
	ev.Format = FormatBinary
	return nil
}
