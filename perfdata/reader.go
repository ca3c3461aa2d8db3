package perfdata

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// maxInflated bounds what the records of perf record -z may inflate to and
// be pending at once (perf writes at most a ring buffer's worth per
// compressed record).
const maxInflated = 256 << 20

// Record is one record of the file.
type Record struct {
	Type uint32
	Misc uint16
	// Data is the whole record, its 8-byte header included. It is valid
	// until the next call of Next (it aliases the file for OpenBytes).
	Data []byte
	// Offset is the record's byte offset in the file; for a record
	// inflated from a compressed one (Inflated), the compressed record's.
	Offset   int64
	Inflated bool
	// PayloadOffset and PayloadSize locate the data that follows the
	// record in the file and is not a record: the trace data of an
	// AUXTRACE record, the tracing data of a pipe-mode HEADER_TRACING_DATA
	// (padded to 8 bytes). Next skips it; Payload reads it. The size is
	// what the record says: it may run past the end of a cut file.
	PayloadOffset, PayloadSize int64
}

// Reader reads the records of a File in file order.
type Reader struct {
	f    *File
	br   *bufio.Reader // nil for OpenBytes
	off  int64         // file offset of the next byte
	end  int64         // end of the data section (-1: to the end of a stream)
	buf  []byte
	rec  Record
	skip int64 // payload bytes of the last record not read yet

	compressed uint64

	// Records inflated from compressed records, returned before the next
	// record of the file (a record may continue in the next compressed
	// record, as perf writes them).
	zdec    *zstdStream
	pending []byte
	pendOff int
	pendAt  int64
}

// Compressed counts the compressed records (perf record -z) read so far.
func (r *Reader) Compressed() uint64 { return r.compressed }

// Offset is the file offset of the next record of the file.
func (r *Reader) Offset() int64 { return r.off + r.skip }

// Next returns the next record, or io.EOF after the last. Compressed
// records are inflated and their records returned (Inflated set), not the
// compressed records themselves. An *Error ends reading: a record cut
// short has Truncated set.
func (r *Reader) Next() (*Record, error) {
	rec, err := r.next()
	if err != nil {
		r.Close() // the decoder's goroutine ends with reading
	}
	return rec, err
}

func (r *Reader) next() (*Record, error) {
	if r.skip > 0 {
		if err := r.discard(); err != nil {
			return nil, err
		}
	}
	for {
		if rest := r.pending[r.pendOff:]; len(rest) > 0 {
			if len(rest) >= RecordHeaderSize {
				size := int(binary.LittleEndian.Uint16(rest[6:]))
				if size < RecordHeaderSize {
					return nil, errorf(r.pendAt, "inflated record size %d", size)
				}
				if size <= len(rest) {
					r.pendOff += size
					r.rec = Record{Type: binary.LittleEndian.Uint32(rest), Misc: binary.LittleEndian.Uint16(rest[4:]),
						Data: rest[:size], Offset: r.pendAt, Inflated: true}
					if r.rec.Type == RecordCompressed || r.rec.Type == RecordCompressed2 {
						return nil, errorf(r.pendAt, "compressed record inside a compressed record")
					}
					if r.payload(&r.rec) {
						return nil, errorf(r.pendAt, "%s record inside a compressed record", typeName(r.rec.Type))
					}
					return &r.rec, nil
				}
			}
			// A record cut at the end of the inflated data: the rest comes
			// with the next compressed record.
		}
		if r.end >= 0 && r.off >= r.end {
			return nil, r.endOfRecords()
		}
		rec, err := r.read()
		if err != nil {
			return nil, err
		}
		if rec.Type != RecordCompressed && rec.Type != RecordCompressed2 {
			return rec, nil
		}
		if err := r.inflate(rec); err != nil {
			return nil, err
		}
		r.compressed++
	}
}

// read reads the next record of the file.
func (r *Reader) read() (*Record, error) {
	at := r.off
	var h []byte
	if r.br == nil {
		if r.end-at < RecordHeaderSize {
			return nil, &Error{at, fmt.Sprintf("%d bytes left, shorter than a record header (file truncated)", r.end-at), true}
		}
		h = r.f.mem[at : at+RecordHeaderSize]
	} else {
		var err error
		if h, err = r.br.Peek(RecordHeaderSize); err != nil {
			if err == io.EOF && len(h) == 0 && r.end < 0 {
				return nil, r.endOfRecords()
			}
			return nil, &Error{at, fmt.Sprintf("%d bytes left, shorter than a record header (file truncated)", len(h)), true}
		}
	}
	typ := binary.LittleEndian.Uint32(h)
	misc := binary.LittleEndian.Uint16(h[4:])
	size := int64(binary.LittleEndian.Uint16(h[6:]))
	if size < RecordHeaderSize {
		return nil, errorf(at, "record size %d: cannot find the next record", size)
	}
	if r.end >= 0 && at+size > r.end {
		return nil, &Error{at, fmt.Sprintf("%s record of %d bytes runs past the end of the data (%#x): file truncated", typeName(typ), size, r.end), true}
	}
	var data []byte
	if r.br == nil {
		data = r.f.mem[at : at+size]
	} else {
		if int64(cap(r.buf)) < size {
			r.buf = make([]byte, size, max(size, 1<<16))
		}
		data = r.buf[:size]
		if _, err := io.ReadFull(r.br, data); err != nil {
			return nil, &Error{at, fmt.Sprintf("%s record of %d bytes cut short (file truncated)", typeName(typ), size), true}
		}
	}
	r.off = at + size
	r.rec = Record{Type: typ, Misc: misc, Data: data, Offset: at}
	if r.payload(&r.rec) {
		r.skip = r.rec.PayloadSize
	}
	return &r.rec, nil
}

// payload sets the payload of an AUXTRACE or pipe-mode HEADER_TRACING_DATA
// record, and reports whether it has one.
func (r *Reader) payload(rec *Record) bool {
	var n int64
	switch {
	case rec.Type == RecordAuxtrace && len(rec.Data) >= 16:
		u := binary.LittleEndian.Uint64(rec.Data[8:])
		if u > 1<<62 {
			u = 1 << 62
		}
		n = int64(u)
	case rec.Type == RecordHeaderTracingData && r.f.Pipe && len(rec.Data) >= 12:
		n = int64(binary.LittleEndian.Uint32(rec.Data[8:]))
		n += (8 - n%8) % 8
	default:
		return false
	}
	rec.PayloadOffset, rec.PayloadSize = rec.Offset+int64(len(rec.Data)), n
	return true
}

// discard skips the payload of the last record.
func (r *Reader) discard() error {
	n := r.skip
	if r.end >= 0 && n > r.end-r.off {
		return &Error{r.off, fmt.Sprintf("%d bytes of record data run past the end of the data (%#x): file truncated", n, r.end), true}
	}
	switch {
	case r.br == nil:
	case n <= int64(r.br.Buffered()) || r.f.stream != nil:
		if m, err := r.br.Discard(int(min(n, 1<<62))); err != nil {
			return &Error{r.off + int64(m), fmt.Sprintf("%d bytes of record data cut short (file truncated)", n), true}
		}
	default: // jump there
		r.br.Reset(io.NewSectionReader(r.f.ra, r.off+n, r.end-r.off-n))
	}
	r.off += n
	r.skip = 0
	return nil
}

// Payload returns the payload of the record Next returned last (see
// Record.PayloadSize), read from the file (aliasing it for OpenBytes);
// Next then does not skip it. A payload cut short is an *Error with
// Truncated set.
func (r *Reader) Payload() ([]byte, error) {
	n := r.skip
	if n == 0 {
		return nil, nil
	}
	if r.end >= 0 && n > r.end-r.off {
		return nil, &Error{r.rec.Offset, fmt.Sprintf("%s data of %d bytes runs past the end of the data (%#x): file truncated", typeName(r.rec.Type), n, r.end), true}
	}
	var b []byte
	if r.br == nil {
		b = r.f.mem[r.off : r.off+n]
	} else {
		if n > 1<<30 {
			return nil, errorf(r.rec.Offset, "%s data of %d bytes", typeName(r.rec.Type), n)
		}
		var err error
		// Read as it comes (not allocated first: n may be a lie).
		if b, err = io.ReadAll(io.LimitReader(r.br, n)); err != nil || int64(len(b)) < n {
			return nil, &Error{r.off, fmt.Sprintf("%s data of %d bytes cut short (file truncated)", typeName(r.rec.Type), n), true}
		}
	}
	r.off += n
	r.skip = 0
	return b, nil
}

// endOfRecords is io.EOF, or an error when inflated data ends inside a
// record.
func (r *Reader) endOfRecords() error {
	if n := len(r.pending) - r.pendOff; n > 0 {
		return &Error{r.pendAt, fmt.Sprintf("compressed data ends inside a record (%d bytes left)", n), true}
	}
	return io.EOF
}

// inflate decompresses a PERF_RECORD_COMPRESSED (zstd) or COMPRESSED2 (u64
// data size first) record after what is left of the previous one.
func (r *Reader) inflate(rec *Record) error {
	data := rec.Data[RecordHeaderSize:]
	at := rec.Offset
	if rec.Type == RecordCompressed2 {
		if len(data) < 8 {
			return errorf(at, "compressed record without its data size")
		}
		n := binary.LittleEndian.Uint64(data)
		if n > uint64(len(data)-8) {
			return errorf(at+8, "compressed data size %d in a %d-byte record", n, len(rec.Data))
		}
		data = data[8 : 8+n]
	}
	if r.zdec == nil {
		r.zdec = newZstdStream(maxInflated)
	}
	rest := copy(r.pending, r.pending[r.pendOff:])
	r.pending, r.pendOff, r.pendAt = r.pending[:rest], 0, at
	// The decoder uses the payload after this call returns only through
	// its copy: data may be the reader's reused buffer.
	out, err := r.zdec.feed(r.pending, append([]byte(nil), data...))
	r.pending = out
	if err != nil {
		return errorf(at+8, "compressed record (zstd): %v", err)
	}
	return nil
}

// Close ends the decoder of compressed records when reading stops before
// io.EOF or an error (it ends by itself then); it does not close the
// file. Reading after Close returns an error.
func (r *Reader) Close() error {
	if r.zdec != nil {
		r.zdec.close()
	}
	return nil
}

func typeName(t uint32) string {
	switch t {
	case RecordAuxtrace:
		return "AUXTRACE"
	case RecordHeaderTracingData:
		return "HEADER_TRACING_DATA"
	case RecordCompressed, RecordCompressed2:
		return "COMPRESSED"
	}
	return fmt.Sprintf("type %d", t)
}
