package cut

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sort"

	"github.com/iotap/iotap/internal/timerange"
)

// IndexVersion is the version of the index format this package writes and
// reads (see docs/cut.md).
const IndexVersion = 1

// IndexSuffix is appended to an input's path to name its index.
const IndexSuffix = ".iotapidx"

// DefaultInterval is the distance in bytes between checkpoints.
const DefaultInterval = 4 << 20

// hashLen is the number of bytes at each checkpoint whose CRC the index
// keeps; headLen the bytes at the start of the input.
const (
	hashLen = 4096
	headLen = 64 << 10
)

// Limits of an index (an input beyond them is indexed with fewer details,
// said by the flags).
const (
	maxMetas   = 1 << 20
	maxMarkers = 1 << 16
	maxSources = 256
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Index is the sidecar index of an input: checkpoints (time -> byte
// offset) every Interval bytes, the headers a cut needs before any
// checkpoint, markers, and per-source counts. Times are ns on the trace's
// clock; NoTime stands for "none".
type Index struct {
	Format   Format
	Size     int64  // input size in bytes
	ModTime  int64  // input modification time, ns since the epoch
	HeadCRC  uint32 // CRC-32C of the input's first 64 KiB
	Interval int64  // bytes between checkpoints
	// First and Last are the first and last record times (NoTime when no
	// record is timed).
	First, Last int64
	Records     int64  // records in the input
	Lost        uint64 // loss the input's records report
	Checkpoints []Checkpoint
	Metas       []Meta
	Markers     []Marker
	// MarkersComplete is false when the input had more than 65536
	// markers (or the index is partial): mark:NAME then reads the input.
	MarkersComplete bool
	// Partial says the index covers the first Size bytes of an input that
	// was still being written (IndexWriter, 'iotap capture'): a longer
	// input starting with the same bytes is used with it, the records
	// after Size read as they are.
	Partial bool
	Sources []Source

	truncated   bool // TruncatedAt
	truncatedAt int64
}

// Checkpoint is a record boundary where reading can start.
type Checkpoint struct {
	Off int64
	// Last is the time of the last timed record before Off (NoTime).
	Last int64
	// PrefixMax is the latest effective time of the records before Off,
	// SuffixMin the earliest of those at or after Off (records out of
	// order are allowed).
	PrefixMax, SuffixMin int64
	// CRC is the CRC-32C of the 4096 bytes at Off (fewer at the end).
	CRC uint32
}

// Meta is a header record (or a statistics record) a cut of a window
// after it needs, by position.
type Meta struct {
	Off int64
	Len uint32
	CRC uint32 // CRC-32C of the record
}

// Marker is a marker and its time.
type Marker struct {
	Time int64
	Text string
}

// Source is the event count of one source (an MMIO access kind, a USB
// bus:device, an event name) per checkpoint interval: Counts[i] counts
// the records between checkpoint i and i+1 (the end).
type Source struct {
	Name   string
	Total  uint64
	Counts []uint64
}

// Marker returns the time of the marker mark:name selects.
func (ix *Index) Marker(name string) (int64, bool) {
	texts := make([]string, len(ix.Markers))
	for i, m := range ix.Markers {
		texts[i] = m.Text
	}
	if i := timerange.MatchMarker(texts, name); i >= 0 {
		return ix.Markers[i].Time, true
	}
	return 0, false
}

// span returns the checkpoint to start reading a window at and the one to
// stop at (nil: the end).
func (ix *Index) span(w timerange.Window) (start Checkpoint, stop *Checkpoint) {
	cps := ix.Checkpoints
	i := 0
	if w.HasFrom {
		// The last checkpoint all of whose predecessors are before from.
		i = sort.Search(len(cps), func(k int) bool { return cps[k].PrefixMax >= w.From }) - 1
		if i < 0 {
			i = 0
		}
	}
	if w.HasTo {
		j := sort.Search(len(cps), func(k int) bool { return cps[k].SuffixMin >= w.To })
		if j < len(cps) {
			if j <= i {
				j = i
			}
			return cps[i], &cps[j]
		}
	}
	return cps[i], nil
}

// matches checks that the index describes the input.
func (ix *Index) matches(in Input, f Format) error {
	if in.ReaderAt == nil {
		return errors.New("the input is not seekable (compressed?)")
	}
	if ix.Format != f {
		return fmt.Errorf("it indexes a %s, the input is a %s", ix.Format, f)
	}
	switch {
	case ix.Partial && in.Size < ix.Size:
		return fmt.Errorf("stale: it indexes the first %d bytes, the input has %d", ix.Size, in.Size)
	case !ix.Partial && ix.Size != in.Size:
		return fmt.Errorf("stale: it indexes %d bytes, the input has %d", ix.Size, in.Size)
	case !ix.Partial && in.ModTime != 0 && ix.ModTime != in.ModTime:
		return errors.New("stale: the input was modified after it was indexed")
	}
	n := min(int64(headLen), ix.Size)
	b := make([]byte, n)
	if _, err := in.ReaderAt.ReadAt(b, 0); err != nil && err != io.EOF {
		return err
	}
	if crc(b) != ix.HeadCRC {
		return errors.New("stale: the input's first bytes differ")
	}
	return nil
}

// BuildIndex reads the whole input once and returns its index. The input
// must be seekable (ReaderAt): a compressed input cannot be indexed.
func BuildIndex(ctx context.Context, in Input, interval int64) (*Index, error) {
	if in.ReaderAt == nil {
		return nil, errors.New("cut: index: the input is not a plain file (compressed inputs cannot be seeked: decompress it first)")
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	c := &cutter{in: in, res: &Result{}}
	f, err := c.sniff()
	if err != nil {
		return nil, err
	}
	if f == FormatPT {
		return nil, errors.New("cut: index: Intel PT traces are not indexed (cut reads them from the start)")
	}
	b := newIndexer(f, interval)
	sc := newScanner(f)
	sc.reset(io.NewSectionReader(in.ReaderAt, 0, in.Size), 0, NoTime)
	var u unit
	truncAt := int64(-1)
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		off := sc.offset()
		b.checkpoint(off)
		raw, err := sc.next(&u)
		if errors.Is(err, ErrTruncated) {
			truncAt = off
			if fe := (*FormatError)(nil); errors.As(err, &fe) {
				truncAt = fe.Offset
			}
			// A half record at the end (a capture killed mid-write): not
			// indexed, but a cut of a window that holds its time (the last
			// record's) reads it, and counts it as lost.
			b.mins[len(b.mins)-1] = min(b.mins[len(b.mins)-1], b.last)
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if u.cut {
			truncAt = off
		}
		if err := b.record(off, &u, raw); err != nil {
			return nil, err
		}
	}
	ix, err := b.snapshot(in.ReaderAt, in.Size, in.ModTime, false)
	if ix != nil && truncAt >= 0 {
		ix.truncated, ix.truncatedAt = true, truncAt
	}
	return ix, err
}

// TruncatedAt is, for an index BuildIndex made, the offset of the record
// the input ends inside (a capture killed mid-write), -1 when it ends
// cleanly. The index covers the records before it; a cut of a window
// holding it counts it as a lost event. An index read back (ReadIndex)
// does not know it: -1.
func (ix *Index) TruncatedAt() int64 {
	if !ix.truncated {
		return -1
	}
	return ix.truncatedAt
}

// indexer builds an index record by record (BuildIndex, IndexWriter).
type indexer struct {
	ix      Index // without the derived fields (SuffixMin, Counts, CRCs)
	srcIdx  map[string]int
	mins    []int64    // per checkpoint interval, the earliest time
	counts  [][]uint64 // per checkpoint interval, per source
	last    int64      // time of the last timed record
	prefMax int64
	next    int64 // offset of the next checkpoint
}

func newIndexer(f Format, interval int64) *indexer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &indexer{ix: Index{Format: f, Interval: interval, First: NoTime, Last: NoTime, MarkersComplete: true},
		srcIdx: map[string]int{}, last: NoTime, prefMax: NoTime}
}

// checkpoint is called at each record boundary off (and at the end).
func (b *indexer) checkpoint(off int64) {
	if off >= b.next {
		b.ix.Checkpoints = append(b.ix.Checkpoints, Checkpoint{Off: off, Last: b.last, PrefixMax: b.prefMax})
		b.mins = append(b.mins, math.MaxInt64)
		b.counts = append(b.counts, nil)
		b.next = off + b.ix.Interval
	}
}

// record adds the record raw at off.
func (b *indexer) record(off int64, u *unit, raw []byte) error {
	ix := &b.ix
	ix.Records++
	if u.timed {
		b.last = u.t
		if ix.First == NoTime {
			ix.First = u.t
		}
		ix.Last = max(ix.Last, u.t)
	}
	eff := b.last
	b.prefMax = max(b.prefMax, eff)
	k := len(b.mins) - 1
	b.mins[k] = min(b.mins[k], eff)
	ix.Lost += u.lost
	switch u.kind {
	case kindHeader, kindStats:
		if len(ix.Metas) >= maxMetas {
			return fmt.Errorf("cut: index: more than %d header records", maxMetas)
		}
		ix.Metas = append(ix.Metas, Meta{Off: off, Len: uint32(len(raw)), CRC: crc(raw)})
	case kindEvent:
		if u.mark != nil && u.timed {
			if len(ix.Markers) < maxMarkers {
				ix.Markers = append(ix.Markers, Marker{Time: u.t, Text: string(u.mark)})
			} else {
				ix.MarkersComplete = false
			}
		}
		si, ok := b.srcIdx[string(u.src)]
		if !ok {
			name := string(u.src)
			if len(ix.Sources) >= maxSources-1 {
				name = "other"
			}
			if si, ok = b.srcIdx[name]; !ok {
				si = len(ix.Sources)
				b.srcIdx[name] = si
				ix.Sources = append(ix.Sources, Source{Name: name})
			}
			b.srcIdx[string(u.src)] = si
		}
		for len(b.counts[k]) <= si {
			b.counts[k] = append(b.counts[k], 0)
		}
		b.counts[k][si]++
		ix.Sources[si].Total++
	}
	return nil
}

// snapshot returns the index of the first size bytes of the input r (the
// records given so far end there): complete, or partial (the input
// continues; its markers are then not complete).
func (b *indexer) snapshot(r io.ReaderAt, size, modTime int64, partial bool) (*Index, error) {
	ix := b.ix
	ix.Size, ix.ModTime, ix.Partial = size, modTime, partial
	if partial {
		ix.ModTime = 0
		ix.MarkersComplete = false
	}
	ix.Checkpoints = append([]Checkpoint(nil), b.ix.Checkpoints...)
	ix.Metas = b.ix.Metas[:len(b.ix.Metas):len(b.ix.Metas)]
	ix.Markers = b.ix.Markers[:len(b.ix.Markers):len(b.ix.Markers)]
	ix.Sources = append([]Source(nil), b.ix.Sources...)
	head := make([]byte, min(int64(headLen), size))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, err
	}
	ix.HeadCRC = crc(head)
	// SuffixMin from the interval minima, backwards.
	sm := int64(math.MaxInt64)
	for i := len(ix.Checkpoints) - 1; i >= 0; i-- {
		sm = min(sm, b.mins[i])
		ix.Checkpoints[i].SuffixMin = sm
	}
	for i := range ix.Sources {
		ix.Sources[i].Counts = make([]uint64, len(ix.Checkpoints))
	}
	for k, cs := range b.counts {
		for si, n := range cs {
			ix.Sources[si].Counts[k] = n
		}
	}
	buf := make([]byte, hashLen)
	for i := range ix.Checkpoints {
		cp := &ix.Checkpoints[i]
		n, err := r.ReadAt(buf[:min(int64(hashLen), max(size-cp.Off, 0))], cp.Off)
		if err != nil && err != io.EOF {
			return nil, err
		}
		cp.CRC = crc(buf[:n])
	}
	return &ix, nil
}

var indexMagic = []byte("IOTAPIDX")

// MarshalBinary encodes the index (format in docs/cut.md).
func (ix *Index) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), indexMagic...)
	b = binary.LittleEndian.AppendUint16(b, IndexVersion)
	flags := byte(0)
	if ix.MarkersComplete {
		flags |= 1
	}
	if ix.Partial {
		flags |= 2
	}
	b = append(b, byte(ix.Format), flags)
	u := binary.AppendUvarint
	v := binary.AppendVarint
	b = u(b, uint64(ix.Size))
	b = v(b, ix.ModTime)
	b = u(b, uint64(ix.HeadCRC))
	b = u(b, uint64(ix.Interval))
	b = v(b, ix.First)
	b = v(b, ix.Last)
	b = u(b, uint64(ix.Records))
	b = u(b, ix.Lost)
	b = u(b, uint64(len(ix.Checkpoints)))
	prev := int64(0)
	for _, cp := range ix.Checkpoints {
		b = u(b, uint64(cp.Off-prev))
		prev = cp.Off
		b = v(b, cp.Last)
		b = v(b, cp.PrefixMax)
		b = v(b, cp.SuffixMin)
		b = u(b, uint64(cp.CRC))
	}
	b = u(b, uint64(len(ix.Metas)))
	prev = 0
	for _, m := range ix.Metas {
		b = u(b, uint64(m.Off-prev))
		prev = m.Off
		b = u(b, uint64(m.Len))
		b = u(b, uint64(m.CRC))
	}
	b = u(b, uint64(len(ix.Markers)))
	for _, m := range ix.Markers {
		b = v(b, m.Time)
		b = u(b, uint64(len(m.Text)))
		b = append(b, m.Text...)
	}
	b = u(b, uint64(len(ix.Sources)))
	for _, s := range ix.Sources {
		b = u(b, uint64(len(s.Name)))
		b = append(b, s.Name...)
		if len(s.Counts) != len(ix.Checkpoints) {
			return nil, errors.New("cut: index: source counts do not match the checkpoints")
		}
		for _, n := range s.Counts {
			b = u(b, n)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc(b)), nil
}

// IndexError is an index file that cannot be used, with the byte offset
// in the index where decoding failed.
type IndexError struct {
	Offset int
	Msg    string
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("cut: index: offset %d: %s", e.Offset, e.Msg)
}

// maxIndexSize bounds an index file read.
const maxIndexSize = 1 << 30

// ReadIndex decodes an index; a damaged, truncated, inconsistent or
// newer-version index is an *IndexError.
func ReadIndex(r io.Reader) (*Index, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxIndexSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxIndexSize {
		return nil, &IndexError{maxIndexSize, "index larger than 1 GiB"}
	}
	return UnmarshalIndex(data)
}

// UnmarshalIndex is ReadIndex over bytes.
func UnmarshalIndex(data []byte) (*Index, error) {
	d := &idxDecoder{b: data}
	if len(data) < len(indexMagic)+4+4 || !bytes.Equal(data[:len(indexMagic)], indexMagic) {
		return nil, &IndexError{0, "not an iotap index (magic)"}
	}
	body := data[:len(data)-4]
	if crc(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, &IndexError{len(data) - 4, "checksum mismatch: the index is damaged"}
	}
	d.b, d.off = body[len(indexMagic):], len(indexMagic)
	ver := binary.LittleEndian.Uint16(d.b)
	if ver != IndexVersion {
		return nil, &IndexError{d.off, fmt.Sprintf("version %d (this iotap reads version %d)", ver, IndexVersion)}
	}
	ix := &Index{Format: Format(d.b[2]), MarkersComplete: d.b[3]&1 != 0, Partial: d.b[3]&2 != 0}
	d.b, d.off = d.b[4:], d.off+4
	if ix.Format == FormatUnknown || ix.Format >= FormatPT {
		return nil, &IndexError{d.off - 2, fmt.Sprintf("unknown format %d", ix.Format)}
	}
	ix.Size = d.int63()
	ix.ModTime = d.varint()
	ix.HeadCRC = uint32(d.uvarintMax(math.MaxUint32))
	ix.Interval = d.int63()
	ix.First = d.varint()
	ix.Last = d.varint()
	ix.Records = d.int63()
	ix.Lost = d.uvarint()
	ncp := d.count(5)
	prev := int64(0)
	for i := 0; i < ncp && d.err == nil; i++ {
		cp := Checkpoint{Off: prev + d.int63()}
		cp.Last, cp.PrefixMax, cp.SuffixMin = d.varint(), d.varint(), d.varint()
		cp.CRC = uint32(d.uvarintMax(math.MaxUint32))
		switch {
		case i == 0 && cp.Off != 0:
			d.fail("first checkpoint not at offset 0")
		case i > 0 && cp.Off <= prev:
			d.fail("checkpoints out of order")
		case cp.Off > ix.Size:
			d.fail("checkpoint beyond the input's size")
		case i > 0 && (cp.PrefixMax < ix.Checkpoints[i-1].PrefixMax || cp.SuffixMin < ix.Checkpoints[i-1].SuffixMin):
			d.fail("checkpoint times out of order")
		}
		prev = cp.Off
		ix.Checkpoints = append(ix.Checkpoints, cp)
	}
	if d.err == nil && ncp == 0 {
		d.fail("no checkpoint")
	}
	nm := d.count(3)
	prev = 0
	for i := 0; i < nm && d.err == nil; i++ {
		m := Meta{Off: prev + d.int63(), Len: uint32(d.uvarintMax(maxNgBlock + maxLine)), CRC: uint32(d.uvarintMax(math.MaxUint32))}
		if (i > 0 && m.Off <= prev) || m.Off+int64(m.Len) > ix.Size || m.Len == 0 {
			d.fail("header records out of order or beyond the input")
		}
		prev = m.Off
		ix.Metas = append(ix.Metas, m)
	}
	nk := d.count(2)
	for i := 0; i < nk && d.err == nil; i++ {
		t := d.varint()
		n := d.count(1)
		ix.Markers = append(ix.Markers, Marker{Time: t, Text: string(d.bytes(n))})
	}
	ns := d.count(1 + ncp)
	if ns > maxSources {
		d.fail("too many sources")
	}
	for i := 0; i < ns && d.err == nil; i++ {
		s := Source{Name: string(d.bytes(d.count(1)))}
		s.Counts = make([]uint64, 0, ncp)
		for k := 0; k < ncp && d.err == nil; k++ {
			n := d.uvarint()
			s.Counts = append(s.Counts, n)
			s.Total += n
		}
		ix.Sources = append(ix.Sources, s)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d bytes after the last field", len(d.b)))
	}
	if d.err != nil {
		return nil, d.err
	}
	return ix, nil
}

type idxDecoder struct {
	b   []byte
	off int
	err error
}

func (d *idxDecoder) fail(msg string) {
	if d.err == nil {
		d.err = &IndexError{d.off, msg}
	}
}

func (d *idxDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad or truncated number")
		return 0
	}
	d.b, d.off = d.b[n:], d.off+n
	return v
}

func (d *idxDecoder) uvarintMax(max uint64) uint64 {
	v := d.uvarint()
	if v > max {
		d.fail(fmt.Sprintf("value %d out of range", v))
		return 0
	}
	return v
}

func (d *idxDecoder) int63() int64 { return int64(d.uvarintMax(math.MaxInt64)) }

func (d *idxDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad or truncated number")
		return 0
	}
	d.b, d.off = d.b[n:], d.off+n
	return v
}

// count reads a count of entries each at least minBytes long: more than
// the rest of the index can hold is an error (no huge allocation).
func (d *idxDecoder) count(minBytes int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)/minBytes) {
		d.fail(fmt.Sprintf("count %d larger than the index", v))
		return 0
	}
	return int(v)
}

func (d *idxDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	p := d.b[:n]
	d.b, d.off = d.b[n:], d.off+n
	return p
}
