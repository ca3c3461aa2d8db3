package perfdata

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Magic starts every perf.data file (file and pipe mode).
var Magic = []byte("PERFILE2")

// Is reports whether b starts like a perf.data file.
func Is(b []byte) bool { return bytes.HasPrefix(b, Magic) }

// Header sizes.
const (
	FileHeaderSize   = 104 // file mode: magic, sizes, sections, feature bits
	PipeHeaderSize   = 16  // pipe mode: magic and the header size
	RecordHeaderSize = 8   // perf_event_header: type, misc, size
)

// Record types of the perf.data format that this package itself reads
// (the kernel's are in include/uapi/linux/perf_event.h; perf's own in
// tools/lib/perf/include/perf/event.h).
const (
	RecordHeaderAttr        = 64
	RecordHeaderTracingData = 66
	RecordAuxtrace          = 71
	RecordHeaderFeature     = 80
	RecordCompressed        = 81
	RecordCompressed2       = 83
)

// Limits on what a file may declare.
const (
	maxAttrs     = 1 << 12 // attributes in the attribute section
	maxAttrSize  = 1 << 12 // bytes of one attribute entry
	maxIDsSize   = 8 << 16 // bytes of one attribute's ids
	minAttrBytes = 48      // type .. flags: what Attr decodes
)

// ErrInvalid is matched (errors.Is) by every error about malformed input.
var ErrInvalid = errors.New("malformed perf.data")

// Error is malformed input at byte Offset of the file (of the compressed
// record for a record inflated from one).
type Error struct {
	Offset int64
	Msg    string
	// Truncated is set when the input ends early (a record or its data
	// runs past the end): what was read before it is complete.
	Truncated bool
}

func (e *Error) Error() string { return fmt.Sprintf("perf.data at byte %d: %s", e.Offset, e.Msg) }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Error) Unwrap() error { return ErrInvalid }

func errorf(off int64, format string, args ...any) error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Attr is an event attribute (struct perf_event_attr, the fields read
// here) with the ids of its events (one per CPU or thread).
type Attr struct {
	Type       uint32
	Size       uint32 // the attribute's size as perf wrote it
	Config     uint64
	SampleType uint64 // PERF_SAMPLE_* bits
	ReadFormat uint64
	Flags      uint64 // the bit field word: disabled, ..., sample_id_all (bit 18), mmap2, ...
	IDs        []uint64
}

// SampleIDAll reports the sample_id_all flag: non-sample records carry
// the sample id fields too.
func (a *Attr) SampleIDAll() bool { return a.Flags&(1<<18) != 0 }

// ParseAttr decodes a struct perf_event_attr (the ids are not part of it);
// ok is false when b is too short.
func ParseAttr(b []byte) (a Attr, ok bool) {
	if len(b) < minAttrBytes {
		return Attr{}, false
	}
	le := binary.LittleEndian
	return Attr{Type: le.Uint32(b), Size: le.Uint32(b[4:]), Config: le.Uint64(b[8:]), SampleType: le.Uint64(b[24:]),
		ReadFormat: le.Uint64(b[32:]), Flags: le.Uint64(b[40:])}, true
}

// HeaderAttr decodes a PERF_RECORD_HEADER_ATTR record (pipe mode: an
// attribute and its ids), rec with its header, at file offset off.
func HeaderAttr(rec []byte, off int64) (Attr, error) {
	if len(rec) < RecordHeaderSize+minAttrBytes {
		return Attr{}, errorf(off, "HEADER_ATTR record of %d bytes", len(rec))
	}
	a := rec[RecordHeaderSize:]
	asz := int(binary.LittleEndian.Uint32(a[4:]))
	if asz < minAttrBytes || asz > len(a) {
		return Attr{}, errorf(off+12, "HEADER_ATTR with attr size %d in a %d-byte record", asz, len(rec))
	}
	at, _ := ParseAttr(a[:asz])
	for i := asz; i+8 <= len(a); i += 8 {
		at.IDs = append(at.IDs, binary.LittleEndian.Uint64(a[i:]))
	}
	return at, nil
}

// Section is a part of the file: a feature section, the data section.
type Section struct{ Offset, Size int64 }

// File is an opened perf.data: its header, attributes and feature
// sections. Records reads its records.
type File struct {
	// Pipe is set for pipe mode (perf record -o -): no attribute or
	// feature sections, everything is in records.
	Pipe bool
	// Size is the file's size (-1 for a stream).
	Size int64
	// Data is the data section: the records (in pipe mode, from the end
	// of the header to the end of the file; Size -1 for a stream).
	Data Section
	// Attrs are the attribute section's attributes (file mode; in pipe
	// mode they are HEADER_ATTR records, see HeaderAttr).
	Attrs []Attr
	// Features are the header's feature bits (HEADER_BUILD_ID = 2, ...).
	Features [4]uint64
	// Sections holds the feature sections found in the file, by feature
	// bit (those set in Features and inside the file).
	Sections map[int]Section
	// Truncated says why the data section is not what the header says
	// (perf record did not finish, or the file was cut): the records are
	// then read to the end of the file, and there are no feature
	// sections.
	Truncated string
	// Warnings are what was skipped: a feature table cut short, a
	// feature section outside the file.
	Warnings []string

	ra     io.ReaderAt
	mem    []byte    // the whole file (OpenBytes)
	stream io.Reader // pipe mode from a stream (OpenStream), after the header
}

// HasFeature reports whether the header's feature bit is set.
func (f *File) HasFeature(bit int) bool {
	return bit >= 0 && bit < 256 && f.Features[bit/64]&(1<<(bit%64)) != 0
}

// Section returns the bytes of a feature section (ok false when the file
// has none).
func (f *File) Section(bit int) (b []byte, ok bool, err error) {
	s, ok := f.Sections[bit]
	if !ok {
		return nil, false, nil
	}
	if f.mem != nil {
		return f.mem[s.Offset : s.Offset+s.Size], true, nil
	}
	b = make([]byte, s.Size)
	if _, err := f.ra.ReadAt(b, s.Offset); err != nil {
		return nil, true, errorf(s.Offset, "feature %d: %v", bit, err)
	}
	return b, true, nil
}

// OpenBytes opens a perf.data held in memory: records and sections alias
// b (no copies).
func OpenBytes(b []byte) (*File, error) {
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	f.mem = b
	return f, nil
}

// OpenStream opens a pipe-mode perf.data read from a stream (perf record
// -o - | ...). A file-mode perf.data needs Open: its attributes and
// features are after the records.
func OpenStream(r io.Reader) (*File, error) {
	head := make([]byte, PipeHeaderSize)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, errorf(0, "shorter than a perf.data header")
	}
	if !Is(head) {
		return nil, errorf(0, "no PERFILE2 magic: not a perf.data file")
	}
	if binary.LittleEndian.Uint64(head[8:]) != PipeHeaderSize {
		return nil, errorf(0, "file-mode perf.data needs random access (not a stream)")
	}
	return &File{Pipe: true, Size: -1, Data: Section{PipeHeaderSize, -1}, stream: r}, nil
}

// Open opens the perf.data read from r, of size bytes. A file whose data
// section runs past its end (perf record killed, the file cut) opens
// with Truncated set; a header that makes no sense is an *Error.
func Open(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, errorf(0, "size unknown (a stream: OpenStream reads pipe mode)")
	}
	hdr := make([]byte, FileHeaderSize)
	n, err := r.ReadAt(hdr[:min(int64(len(hdr)), max(size, 0))], 0)
	hdr = hdr[:n]
	if n < PipeHeaderSize {
		if err != nil && err != io.EOF {
			return nil, errorf(0, "header: %v", err)
		}
		return nil, errorf(0, "shorter than a perf.data header")
	}
	if !Is(hdr) {
		return nil, errorf(0, "no PERFILE2 magic: not a perf.data file")
	}
	le := binary.LittleEndian
	hsize := le.Uint64(hdr[8:])
	f := &File{Size: size, ra: r}
	switch {
	case hsize == PipeHeaderSize:
		f.Pipe = true
		f.Data = Section{PipeHeaderSize, size - PipeHeaderSize}
		return f, nil
	case hsize >= FileHeaderSize && uint64(size) >= hsize:
	case hsize >= FileHeaderSize:
		return nil, errorf(0, "file of %d bytes is shorter than its %d-byte header (truncated)", size, hsize)
	default:
		return nil, errorf(8, "bad header size %d", hsize)
	}
	if n < FileHeaderSize {
		return nil, errorf(0, "header: %v", err)
	}
	usize := uint64(size)
	in := func(o, n uint64) bool { return o+n >= o && o+n <= usize }
	attrSize := le.Uint64(hdr[16:])
	aOff, aSize := le.Uint64(hdr[24:]), le.Uint64(hdr[32:])
	dOff, dSize := le.Uint64(hdr[40:]), le.Uint64(hdr[48:])
	for i := range f.Features {
		f.Features[i] = le.Uint64(hdr[72+8*i:])
	}
	if dOff < hsize || dOff > usize {
		return nil, errorf(40, "data section offset %#x outside the file (%d bytes)", dOff, size)
	}
	switch {
	case dSize == 0 && usize > dOff:
		// perf record writes the header again when it finishes; a data
		// size of 0 means it was killed before.
		f.Data = Section{int64(dOff), size - int64(dOff)}
		f.Truncated = "the header's data size is 0 (perf record did not finish); reading records to the end of the file"
	case !in(dOff, dSize):
		f.Data = Section{int64(dOff), size - int64(dOff)}
		f.Truncated = fmt.Sprintf("the data section (%#x+%#x) runs past the end of the file (%d bytes): file truncated", dOff, dSize, size)
	default:
		f.Data = Section{int64(dOff), int64(dSize)}
	}
	if aSize > 0 {
		if !in(aOff, aSize) || attrSize < 16+minAttrBytes || attrSize > aSize || attrSize > maxAttrSize || aSize/attrSize > maxAttrs {
			return nil, errorf(24, "bad attribute section (offset %#x, size %#x, entry size %d)", aOff, aSize, attrSize)
		}
		attrs := make([]byte, aSize)
		if _, err := r.ReadAt(attrs, int64(aOff)); err != nil {
			return nil, errorf(int64(aOff), "attributes: %v", err)
		}
		for o := uint64(0); o+attrSize <= aSize; o += attrSize {
			at, _ := ParseAttr(attrs[o : o+attrSize-16])
			idOff, idSize := le.Uint64(attrs[o+attrSize-16:]), le.Uint64(attrs[o+attrSize-8:])
			if idSize%8 != 0 || !in(idOff, idSize) || idSize > maxIDsSize {
				return nil, errorf(int64(aOff+o+attrSize-16), "attribute ids section %#x+%#x outside the file", idOff, idSize)
			}
			if idSize > 0 {
				ids := make([]byte, idSize)
				if _, err := r.ReadAt(ids, int64(idOff)); err != nil {
					return nil, errorf(int64(idOff), "attribute ids: %v", err)
				}
				for i := 0; i+8 <= len(ids); i += 8 {
					at.IDs = append(at.IDs, le.Uint64(ids[i:]))
				}
			}
			f.Attrs = append(f.Attrs, at)
		}
	}
	// The feature sections' table follows the data section, one entry per
	// feature bit set (bit 0 is reserved), in bit order.
	if f.Truncated != "" {
		return f, nil
	}
	f.Sections = map[int]Section{}
	t := dOff + dSize
	for bit := 1; bit < 256; bit++ {
		if !f.HasFeature(bit) {
			continue
		}
		var ent [16]byte
		if !in(t, 16) {
			f.Warnings = append(f.Warnings, fmt.Sprintf("feature table cut short at bit %d", bit))
			break
		}
		if _, err := r.ReadAt(ent[:], int64(t)); err != nil {
			return nil, errorf(int64(t), "feature table: %v", err)
		}
		so, ss := le.Uint64(ent[:]), le.Uint64(ent[8:])
		if in(so, ss) {
			f.Sections[bit] = Section{int64(so), int64(ss)}
		} else {
			f.Warnings = append(f.Warnings, fmt.Sprintf("feature %d: section %#x+%#x outside the file", bit, so, ss))
		}
		t += 16
	}
	return f, nil
}

// Records returns a reader of the file's records, from the start of the
// data section. A stream (OpenStream) can be read once.
func (f *File) Records() *Reader {
	r := &Reader{f: f, off: f.Data.Offset, end: -1}
	if f.Data.Size >= 0 {
		r.end = f.Data.Offset + f.Data.Size
	}
	switch {
	case f.mem != nil:
	case f.stream != nil:
		r.br = bufio.NewReaderSize(f.stream, 1<<16)
	default:
		r.br = bufio.NewReaderSize(io.NewSectionReader(f.ra, f.Data.Offset, f.Data.Size), 1<<16)
	}
	return r
}
