package userevents

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// perf.data layout (tools/perf/Documentation/perf.data-file-format.txt).
const (
	perfFileHeaderSize  = 104
	perfPipeHeaderSize  = 16
	perfFeatTracingData = 1  // HEADER_TRACING_DATA
	perfFeatClockData   = 29 // HEADER_CLOCK_DATA: the recording clock against the wall clock
	perfFeatLastKnown   = 32 // feature bits perf 6.x defines are below this

	perfRecordHeaderAttr        = 64
	perfRecordHeaderTracingData = 66
	perfRecordHeaderFeature     = 80
	perfRecordCompressed        = 81
	perfRecordCompressed2       = 83

	sampleIP         = 1 << 0
	sampleTID        = 1 << 1
	sampleTime       = 1 << 2
	sampleAddr       = 1 << 3
	sampleRead       = 1 << 4
	sampleCallchain  = 1 << 5
	sampleID         = 1 << 6
	sampleCPU        = 1 << 7
	samplePeriod     = 1 << 8
	sampleStreamID   = 1 << 9
	sampleRaw        = 1 << 10
	sampleIdentifier = 1 << 16

	readTotalEnabled = 1 << 0
	readTotalRunning = 1 << 1
	readID           = 1 << 2
	readGroup        = 1 << 3
	readLost         = 1 << 4

	perfTypeTracepoint = 2
)

// PerfDataError is a malformed perf.data at byte Offset of the file.
type PerfDataError struct {
	Offset int64
	Msg    string
}

func (e *PerfDataError) Error() string {
	return fmt.Sprintf("userevents: perf.data at byte %d: %s", e.Offset, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *PerfDataError) Unwrap() error { return ErrInvalid }

// PerfDataStats counts what a PerfDataReader saw.
type PerfDataStats struct {
	Events uint64 // tracepoint samples decoded and returned
	// Lost is what the kernel reported lost (PERF_RECORD_LOST counts and
	// PERF_RECORD_LOST_SAMPLES).
	Lost uint64
	// NotTracepoint counts samples of other events (cycles, ...);
	// NoFormat samples whose event id has no format in the tracing data;
	// Bad samples that did not decode (each also in Errors, up to a cap).
	NotTracepoint, NoFormat, Bad uint64
	// Compressed counts PERF_RECORD_COMPRESSED records (perf record -z),
	// inflated (zstd) and read like the others.
	Compressed uint64
}

type perfAttr struct {
	typ        uint32
	config     uint64
	sampleType uint64
	readFormat uint64
	ids        []uint64
}

// PerfDataReader reads the tracepoint samples (user_events and every other
// tracepoint) of a perf.data file that perf record wrote, file or pipe
// mode, and decodes each with the event's format stored in the file's
// tracing data: the same records, with the same names and values, as the
// recorders of this package return. Samples are returned in file order
// (perf writes them in rounds, per CPU; sort by TS for time order).
type PerfDataReader struct {
	r       *bufio.Reader
	off     int64 // file offset of r's next byte
	end     int64 // end of the data section (-1: to EOF)
	pipe    bool
	attrs   []perfAttr
	byID    map[uint64]int
	idPos   int // byte offset of the sample id from the start of the body, -1 none
	tracing *TracingData
	stats   PerfDataStats
	// Warnings are conditions that do not stop reading: unknown feature
	// sections, compressed records, formats that did not parse.
	Warnings []string
	// Errors holds the first errors of samples that did not decode.
	Errors []error

	buf  []byte
	vals []Value

	// clockOffset is wall-clock ns minus recording-clock ns (CLOCK_DATA).
	clockOffset int64
	clockOK     bool

	// Records inflated from PERF_RECORD_COMPRESSED, read before the
	// next record of the file (a record may continue in the next
	// compressed record, as perf writes them).
	zdec    *zstdStream
	pending []byte
	pendOff int
	pendAt  int64 // file offset of the compressed record they came from
}

// maxInflated bounds what one compressed record may inflate to (perf
// writes at most a ring buffer's worth per record).
const maxInflated = 256 << 20

// maxPerfErrors caps PerfDataReader.Errors.
const maxPerfErrors = 32

// maxPerfAttrs bounds the attributes read from a file.
const maxPerfAttrs = 1 << 12

// NewPerfDataReader opens a perf.data read from r; size is its length in
// bytes, or -1 for a stream (pipe mode only: file mode needs the tracing
// data stored after the samples, so r must then be an io.ReaderAt).
func NewPerfDataReader(r io.Reader, size int64) (*PerfDataReader, error) {
	head := make([]byte, perfPipeHeaderSize)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, &PerfDataError{0, "shorter than a perf.data header"}
	}
	if string(head[:8]) != "PERFILE2" {
		return nil, &PerfDataError{0, "no PERFILE2 magic: not a perf.data file"}
	}
	p := &PerfDataReader{byID: map[uint64]int{}, idPos: -1, end: -1}
	hsize := binary.LittleEndian.Uint64(head[8:])
	if hsize == perfPipeHeaderSize {
		p.pipe = true
		p.r, p.off = bufio.NewReaderSize(r, 1<<16), perfPipeHeaderSize
		return p, nil
	}
	ra, ok := r.(io.ReaderAt)
	if !ok || size < 0 {
		return nil, &PerfDataError{0, "file-mode perf.data needs random access (not a stream)"}
	}
	if hsize < perfFileHeaderSize || int64(hsize) > size {
		return nil, &PerfDataError{8, fmt.Sprintf("header size %d outside %d..%d", hsize, perfFileHeaderSize, size)}
	}
	hdr := make([]byte, perfFileHeaderSize)
	if _, err := ra.ReadAt(hdr, 0); err != nil {
		return nil, &PerfDataError{0, "header: " + err.Error()}
	}
	le := binary.LittleEndian
	attrSize := le.Uint64(hdr[16:])
	aOff, aSize := le.Uint64(hdr[24:]), le.Uint64(hdr[32:])
	dOff, dSize := le.Uint64(hdr[40:]), le.Uint64(hdr[48:])
	in := func(o, n uint64) bool { return o+n >= o && o+n <= uint64(size) }
	if !in(aOff, aSize) || attrSize < 16+64 || attrSize > 1<<12 || aSize/attrSize > maxPerfAttrs {
		return nil, &PerfDataError{24, fmt.Sprintf("bad attribute section (offset %#x, size %#x, entry %d)", aOff, aSize, attrSize)}
	}
	if !in(dOff, 0) {
		return nil, &PerfDataError{40, fmt.Sprintf("data offset %#x outside the file", dOff)}
	}
	if dSize == 0 || !in(dOff, dSize) {
		// perf record killed before it rewrote the header: no feature
		// sections, so no tracing data.
		return nil, &PerfDataError{48, fmt.Sprintf("data section %#x+%#x: perf record did not finish (file truncated)", dOff, dSize)}
	}
	attrs := make([]byte, aSize)
	if _, err := ra.ReadAt(attrs, int64(aOff)); err != nil {
		return nil, &PerfDataError{int64(aOff), err.Error()}
	}
	for o := uint64(0); o+attrSize <= aSize; o += attrSize {
		a := parsePerfEventAttr(attrs[o : o+attrSize-16])
		idOff, idSize := le.Uint64(attrs[o+attrSize-16:]), le.Uint64(attrs[o+attrSize-8:])
		if idSize%8 != 0 || !in(idOff, idSize) || idSize > 8<<16 {
			return nil, &PerfDataError{int64(aOff + o + attrSize - 16), fmt.Sprintf("attribute ids %#x+%#x outside the file", idOff, idSize)}
		}
		ids := make([]byte, idSize)
		if _, err := ra.ReadAt(ids, int64(idOff)); err != nil {
			return nil, &PerfDataError{int64(idOff), err.Error()}
		}
		for i := 0; i+8 <= len(ids); i += 8 {
			a.ids = append(a.ids, le.Uint64(ids[i:]))
		}
		p.addAttr(a)
	}
	// Feature sections: a table of (offset, size) after the data, one per
	// bit set, in bit order.
	t := dOff + dSize
	for bit := 1; bit < 256; bit++ {
		if hdr[72+bit/8]&(1<<(bit%8)) == 0 {
			continue
		}
		var ent [16]byte
		if !in(t, 16) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("feature table cut short at bit %d", bit))
			break
		}
		if _, err := ra.ReadAt(ent[:], int64(t)); err != nil {
			return nil, &PerfDataError{int64(t), err.Error()}
		}
		so, ss := le.Uint64(ent[:]), le.Uint64(ent[8:])
		switch {
		case bit >= perfFeatLastKnown:
			p.Warnings = append(p.Warnings, fmt.Sprintf("unknown feature section %d (%d bytes at %#x) skipped", bit, ss, so))
		case bit == perfFeatClockData:
			if ss < 24 || !in(so, ss) || ss > 1<<12 {
				p.Warnings = append(p.Warnings, fmt.Sprintf("clock data section %#x+%#x unusable: wall-clock time unknown", so, ss))
				break
			}
			b := make([]byte, ss)
			if _, err := ra.ReadAt(b, int64(so)); err != nil {
				return nil, &PerfDataError{int64(so), err.Error()}
			}
			p.setClockData(b)
		case bit == perfFeatTracingData:
			if !in(so, ss) || ss > 1<<30 {
				return nil, &PerfDataError{int64(t), fmt.Sprintf("tracing data section %#x+%#x outside the file", so, ss)}
			}
			b := make([]byte, ss)
			if _, err := ra.ReadAt(b, int64(so)); err != nil {
				return nil, &PerfDataError{int64(so), err.Error()}
			}
			if err := p.setTracing(b, int64(so)); err != nil {
				return nil, err
			}
		}
		t += 16
	}
	if p.tracing == nil {
		p.Warnings = append(p.Warnings, "no tracing data (perf record -e of no tracepoint?): no sample can be decoded")
	}
	p.off, p.end = int64(dOff), int64(dOff+dSize)
	p.r = bufio.NewReaderSize(io.NewSectionReader(ra, int64(dOff), int64(dSize)), 1<<16)
	return p, nil
}

// setClockData reads a HEADER_CLOCK_DATA feature: u32 version, u32
// clockid, u64 wall-clock ns and u64 recording-clock ns taken at the same
// moment by perf record.
func (p *PerfDataReader) setClockData(b []byte) {
	if len(b) < 24 || binary.LittleEndian.Uint32(b) < 1 {
		p.Warnings = append(p.Warnings, "clock data of an unknown version: wall-clock time unknown")
		return
	}
	wall, clk := binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
	p.clockOffset, p.clockOK = int64(wall-clk), true
}

// WallClock returns what to add to a sample's TS (the recording clock) to
// get wall-clock nanoseconds since the Unix epoch, from the clock data
// perf record stores (perf 5.11 and later); ok is false without it.
func (p *PerfDataReader) WallClock() (offset int64, ok bool) { return p.clockOffset, p.clockOK }

func parsePerfEventAttr(a []byte) perfAttr {
	le := binary.LittleEndian
	return perfAttr{typ: le.Uint32(a), config: le.Uint64(a[8:]), sampleType: le.Uint64(a[24:]), readFormat: le.Uint64(a[32:])}
}

func (p *PerfDataReader) addAttr(a perfAttr) {
	i := len(p.attrs)
	p.attrs = append(p.attrs, a)
	for _, id := range a.ids {
		p.byID[id] = i
	}
	// Where the sample id is: first with IDENTIFIER, else after IP, TID,
	// TIME and ADDR (perf requires every attribute to agree).
	st := p.attrs[0].sampleType
	switch {
	case st&sampleIdentifier != 0:
		p.idPos = 0
	case st&sampleID != 0:
		n := 0
		for _, b := range []uint64{sampleIP, sampleTID, sampleTime, sampleAddr} {
			if st&b != 0 {
				n += 8
			}
		}
		p.idPos = n
	}
}

func (p *PerfDataReader) setTracing(b []byte, at int64) error {
	td, err := ParseTracingData(b)
	if err != nil {
		var te *TracingDataError
		if errors.As(err, &te) {
			return &PerfDataError{at + int64(te.Offset), "tracing data: " + te.Msg}
		}
		return err
	}
	for _, e := range td.Bad {
		p.Warnings = append(p.Warnings, e.Error())
	}
	p.tracing = td
	return nil
}

// Tracing returns the file's tracing data (nil before it was read: in
// pipe mode it comes as a record before the samples).
func (p *PerfDataReader) Tracing() *TracingData { return p.tracing }

// Stats returns the counts so far.
func (p *PerfDataReader) Stats() PerfDataStats { return p.stats }

// Read returns the next tracepoint sample, decoded, or io.EOF after the
// last. rec's Values and byte fields point into the reader's buffer: they
// are valid until the next call. A sample that does not decode is counted
// (Stats.Bad, Errors) and skipped; a record structure that is broken ends
// reading with a *PerfDataError (what was read stays valid).
func (p *PerfDataReader) Read(rec *Recorded) error {
	err := p.read(rec)
	if err != nil && p.zdec != nil {
		p.zdec.close() // the decoder's goroutine ends with reading
	}
	return err
}

func (p *PerfDataReader) read(rec *Recorded) error {
	for {
		typ, body, at, inflated, err := p.next()
		if err != nil {
			return err
		}
		size := len(body) + 8
		switch typ {
		case PerfRecordSample:
			ok, err := p.sample(body, at, rec)
			if err != nil {
				p.bad(err)
				continue
			}
			if ok {
				p.stats.Events++
				return nil
			}
		case PerfRecordLost:
			if len(body) >= 16 {
				p.stats.Lost += binary.LittleEndian.Uint64(body[8:])
			}
		case PerfRecordLostSamples:
			if len(body) >= 8 {
				p.stats.Lost += binary.LittleEndian.Uint64(body)
			}
		case perfRecordCompressed, perfRecordCompressed2:
			if inflated {
				return &PerfDataError{at, "compressed record inside a compressed record"}
			}
			if err := p.inflate(typ, body, at); err != nil {
				return err
			}
			p.stats.Compressed++
		case perfRecordHeaderFeature:
			// u64 feature id, then the feature section (pipe mode).
			if len(body) >= 8 && binary.LittleEndian.Uint64(body) == perfFeatClockData {
				p.setClockData(body[8:])
			}
		case perfRecordHeaderAttr:
			if !p.pipe || len(body) < 64 {
				continue
			}
			asz := int(binary.LittleEndian.Uint32(body[4:]))
			if asz < 64 || asz > len(body) {
				return &PerfDataError{at + 12, fmt.Sprintf("attribute size %d in a %d-byte record", asz, size)}
			}
			a := parsePerfEventAttr(body[:asz])
			for i := asz; i+8 <= len(body); i += 8 {
				a.ids = append(a.ids, binary.LittleEndian.Uint64(body[i:]))
			}
			if len(p.attrs) < maxPerfAttrs {
				p.addAttr(a)
			}
		case perfRecordHeaderTracingData:
			// u32 size, then the blob after the record, padded to 8.
			if !p.pipe || len(body) < 4 || inflated {
				continue
			}
			n := int64(binary.LittleEndian.Uint32(body))
			if n > 1<<30 {
				return &PerfDataError{at + 8, fmt.Sprintf("tracing data of %d bytes", n)}
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(p.r, b); err != nil {
				return &PerfDataError{p.off, "tracing data cut short"}
			}
			if err := p.setTracing(b, p.off); err != nil {
				return err
			}
			p.off += n
			if pad := (8 - n%8) % 8; pad > 0 {
				if _, err := p.r.Discard(int(pad)); err != nil {
					return &PerfDataError{p.off, "tracing data padding cut short"}
				}
				p.off += pad
			}
		}
	}
}

// Close ends the decoder of compressed records (perf record -z) when
// reading stops before io.EOF or an error; it does not close the
// underlying reader. Reading after Close returns an error.
func (p *PerfDataReader) Close() error {
	if p.zdec != nil {
		p.zdec.close()
	}
	return nil
}

// next returns the next record: from what a compressed record inflated
// to, else from the file. body is valid until the next call.
func (p *PerfDataReader) next() (typ uint32, body []byte, at int64, inflated bool, err error) {
	if rest := p.pending[p.pendOff:]; len(rest) > 0 {
		if len(rest) >= 8 {
			size := int(binary.LittleEndian.Uint16(rest[6:]))
			if size < 8 {
				return 0, nil, p.pendAt, true, &PerfDataError{p.pendAt, fmt.Sprintf("inflated record size %d", size)}
			}
			if size <= len(rest) {
				p.pendOff += size
				return binary.LittleEndian.Uint32(rest), rest[8:size], p.pendAt, true, nil
			}
		}
		// A record cut at the end of the inflated data: the rest comes
		// with the next compressed record.
	}
	if p.end >= 0 && p.off >= p.end {
		return 0, nil, p.off, false, p.endOfRecords()
	}
	var h [8]byte
	if _, err := io.ReadFull(p.r, h[:]); err != nil {
		if err == io.EOF && (p.pipe || p.end < 0) {
			return 0, nil, p.off, false, p.endOfRecords()
		}
		return 0, nil, p.off, false, &PerfDataError{p.off, "record header cut short (file truncated)"}
	}
	typ = binary.LittleEndian.Uint32(h[:])
	size := int(binary.LittleEndian.Uint16(h[6:]))
	if size < 8 {
		return 0, nil, p.off, false, &PerfDataError{p.off, fmt.Sprintf("record size %d", size)}
	}
	if cap(p.buf) < size-8 {
		p.buf = make([]byte, size-8, 1<<16)
	}
	body = p.buf[:size-8]
	if _, err := io.ReadFull(p.r, body); err != nil {
		return 0, nil, p.off, false, &PerfDataError{p.off, fmt.Sprintf("record of %d bytes cut short (file truncated)", size)}
	}
	at = p.off
	p.off += int64(size)
	return typ, body, at, false, nil
}

// endOfRecords is io.EOF, or an error when inflated data ends inside a
// record.
func (p *PerfDataReader) endOfRecords() error {
	if n := len(p.pending) - p.pendOff; n > 0 {
		return &PerfDataError{p.pendAt, fmt.Sprintf("compressed data ends inside a record (%d bytes left)", n)}
	}
	return io.EOF
}

// inflate decompresses a PERF_RECORD_COMPRESSED (zstd frames) or
// COMPRESSED2 (u64 data size first) record after what is left of the
// previous one.
func (p *PerfDataReader) inflate(typ uint32, body []byte, at int64) error {
	data := body
	if typ == perfRecordCompressed2 {
		if len(body) < 8 {
			return &PerfDataError{at, "compressed record without its data size"}
		}
		n := binary.LittleEndian.Uint64(body)
		if n > uint64(len(body)-8) {
			return &PerfDataError{at + 8, fmt.Sprintf("compressed data size %d in a %d-byte record", n, len(body)+8)}
		}
		data = body[8 : 8+n]
	}
	if p.zdec == nil {
		p.zdec = newZstdStream(maxInflated)
	}
	rest := copy(p.pending, p.pending[p.pendOff:])
	p.pending, p.pendOff, p.pendAt = p.pending[:rest], 0, at
	// The payload is used by the decoder after this call returns only
	// through its copy: body is the reader's reused buffer.
	out, err := p.zdec.feed(p.pending, append([]byte(nil), data...))
	p.pending = out
	if err != nil {
		return &PerfDataError{at + 8, "compressed record (zstd): " + err.Error()}
	}
	return nil
}

func (p *PerfDataReader) bad(err error) {
	p.stats.Bad++
	if len(p.Errors) < maxPerfErrors {
		p.Errors = append(p.Errors, err)
	}
}

// sample decodes a PERF_RECORD_SAMPLE body (at: the record's offset); ok
// false means a sample that is not a decodable tracepoint (counted).
func (p *PerfDataReader) sample(body []byte, at int64, rec *Recorded) (bool, error) {
	if len(p.attrs) == 0 {
		return false, &PerfDataError{at, "sample before any event attribute"}
	}
	a := &p.attrs[0]
	if len(p.attrs) > 1 {
		if p.idPos < 0 || p.idPos+8 > len(body) {
			return false, &PerfDataError{at, "sample without an id, and several events recorded"}
		}
		i, ok := p.byID[binary.LittleEndian.Uint64(body[p.idPos:])]
		if !ok {
			return false, &PerfDataError{at + 8 + int64(p.idPos), "sample id of no recorded event"}
		}
		a = &p.attrs[i]
	}
	if a.typ != perfTypeTracepoint || a.sampleType&sampleRaw == 0 {
		p.stats.NotTracepoint++
		return false, nil
	}
	le := binary.LittleEndian
	o := 0
	short := func(what string) error {
		return &PerfDataError{at + 8 + int64(o), fmt.Sprintf("sample cut short in %s (%d bytes)", what, len(body))}
	}
	skip := func(n int, what string) error {
		if n < 0 || n > len(body)-o {
			return short(what)
		}
		o += n
		return nil
	}
	*rec = Recorded{}
	st := a.sampleType
	var pid, tid uint32
	for _, f := range []struct {
		bit  uint64
		what string
	}{{sampleIdentifier, "identifier"}, {sampleIP, "ip"}, {sampleTID, "tid"}, {sampleTime, "time"}, {sampleAddr, "addr"},
		{sampleID, "id"}, {sampleStreamID, "stream id"}, {sampleCPU, "cpu"}, {samplePeriod, "period"}} {
		if st&f.bit == 0 {
			continue
		}
		if len(body)-o < 8 {
			return false, short(f.what)
		}
		switch f.bit {
		case sampleTID:
			pid, tid = le.Uint32(body[o:]), le.Uint32(body[o+4:])
		case sampleTime:
			rec.TS = le.Uint64(body[o:])
		case sampleCPU:
			rec.CPU = int(le.Uint32(body[o:]))
		}
		o += 8
	}
	if st&sampleRead != 0 {
		rf := a.readFormat
		per := 1
		if rf&readID != 0 {
			per++
		}
		if rf&readLost != 0 {
			per++
		}
		head := 0
		if rf&readTotalEnabled != 0 {
			head++
		}
		if rf&readTotalRunning != 0 {
			head++
		}
		if rf&readGroup != 0 {
			if len(body)-o < 8 {
				return false, short("read group")
			}
			nr := le.Uint64(body[o:])
			if nr > 1<<12 {
				return false, short("read group")
			}
			if err := skip(8*(1+head+per*int(nr)), "read group"); err != nil {
				return false, err
			}
		} else if err := skip(8*(head+per), "read values"); err != nil {
			return false, err
		}
	}
	if st&sampleCallchain != 0 {
		if len(body)-o < 8 {
			return false, short("callchain")
		}
		nr := le.Uint64(body[o:])
		if nr > uint64(len(body)) {
			return false, short("callchain")
		}
		if err := skip(8+8*int(nr), "callchain"); err != nil {
			return false, err
		}
	}
	if len(body)-o < 4 {
		return false, short("raw size")
	}
	n := int(le.Uint32(body[o:]))
	o += 4
	if n > len(body)-o {
		return false, short("raw data")
	}
	raw := body[o : o+n]
	c, ok := ParseCommon(raw)
	if !ok {
		return false, &PerfDataError{at + 8 + int64(o), fmt.Sprintf("raw data of %d bytes, short of the common fields", n)}
	}
	if p.tracing == nil {
		p.stats.NoFormat++
		return false, nil
	}
	f := p.tracing.Formats[int(c.Type)]
	if f == nil {
		p.stats.NoFormat++
		return false, nil
	}
	vals, err := f.Decode(raw, p.vals[:0])
	p.vals = vals
	if err != nil {
		return false, fmt.Errorf("userevents: perf.data sample at byte %d: %w", at, err)
	}
	rec.System, rec.Name, rec.PID, rec.Format, rec.Values = p.tracing.Systems[int(c.Type)], f.Name, c.PID, f, vals
	if c.PID == 0 && tid != 0 {
		rec.PID = int32(tid)
	}
	rec.Process, rec.Thread = int32(pid), int32(tid)
	eh, err := eventHeader(f, raw)
	if err != nil {
		return false, fmt.Errorf("userevents: perf.data sample at byte %d: %s: %w", at, f.Name, err)
	}
	rec.EventHeader = eh
	if p.clockOK && rec.TS != 0 {
		rec.Wall = int64(rec.TS) + p.clockOffset
	}
	return true, nil
}

// IsPerfData reports whether b starts like a perf.data file.
func IsPerfData(b []byte) bool { return bytes.HasPrefix(b, []byte("PERFILE2")) }
