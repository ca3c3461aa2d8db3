package cut

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
)

// NoTime is the effective time of records before the first timed one.
const NoTime = math.MinInt64

// unitKind says how a record takes part in a cut.
type unitKind uint8

const (
	// kindHeader: needed to interpret what follows (pcap(ng) section and
	// interface headers, mmiotrace VERSION/PCIDEV/LSPCI/MAP/UNMAP and
	// comments): kept when its time is before the window's end.
	kindHeader unitKind = iota + 1
	// kindEvent: kept when its time is inside the window.
	kindEvent
	// kindStats: cumulative counters (pcapng interface statistics): those
	// before the window are the baseline, those inside are kept with the
	// baseline subtracted.
	kindStats
)

// unit is one record of an input as the cut sees it.
type unit struct {
	kind  unitKind
	timed bool
	t     int64  // the record's own time (ns on the trace's clock) when timed
	mark  []byte // marker text, nil when the record is no marker
	lost  uint64 // events the record says were lost
	src   []byte // source key for the per-source counts
	// cut: the input ends inside this record (a text line without its
	// newline, kept in place and counted in lost).
	cut bool
}

// scanner reads the records of one format. next fills u and returns the
// record's bytes (valid until the next call), io.EOF at a clean end, and
// errors carrying the byte offset.
type scanner interface {
	next(u *unit) ([]byte, error)
	// reset makes the scanner read r, whose first byte is at offset off of
	// the input; the state built by records already seen is kept (pcapng
	// interfaces), last is the time of the last timed record before off
	// (NoTime if none).
	reset(r io.Reader, off int64, last int64)
	// offset is the input offset of the next record.
	offset() int64
}

// statser is a scanner of a format with cumulative statistics records.
type statser interface {
	// baseline notes a statistics record before the window.
	baseline(raw []byte)
	// relative returns raw with the baseline subtracted from its counters,
	// the interface it counts (unique over sections) and its drops.
	relative(raw []byte) (out []byte, key int, drops uint64)
}

// FormatError is an input that is not what its format says, at Offset.
type FormatError struct {
	Format Format
	Offset int64
	Msg    string
	// Truncated: the input ends inside the record at Offset (a trace cut
	// short, e.g. a capture killed mid-write); errors.Is(err,
	// ErrTruncated) is then true.
	Truncated bool
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("cut: %s: offset %d: %s", e.Format, e.Offset, e.Msg)
}

// ErrFormat is matched (errors.Is) by every *FormatError.
var ErrFormat = errors.New("cut: bad input")

// ErrTruncated is matched (errors.Is) by a *FormatError of an input that
// ends inside a record. Cut, Clock, Markers and BuildIndex take such an
// end as the end of the input; Cut counts the record as lost
// (Result.Truncated).
var ErrTruncated = errors.New("cut: input ends inside a record")

// Is makes errors.Is(err, ErrFormat) true, and errors.Is(err,
// ErrTruncated) for a truncated record.
func (e *FormatError) Is(target error) bool {
	return target == ErrFormat || e.Truncated && target == ErrTruncated
}

// base is the buffered reading shared by the scanners.
type base struct {
	br  *bufio.Reader
	off int64
	buf []byte // lines longer than the buffer
	f   Format
}

const bufSize = 256 << 10

func (b *base) reset(r io.Reader, off int64) {
	if b.br == nil {
		b.br = bufio.NewReaderSize(r, bufSize)
	} else {
		b.br.Reset(r)
	}
	b.off = off
}

func (b *base) offset() int64 { return b.off }

func (b *base) errf(off int64, format string, args ...any) error {
	return &FormatError{Format: b.f, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// truncf is errf for an input that ends inside the record at off.
func (b *base) truncf(off int64, format string, args ...any) error {
	return &FormatError{Format: b.f, Offset: off, Msg: fmt.Sprintf(format, args...), Truncated: true}
}

// maxLine bounds a text record.
const maxLine = 16 << 20

// line returns the next line with its '\n' (the last line may lack it).
func (b *base) line() ([]byte, error) {
	l, err := b.br.ReadSlice('\n')
	if err == nil {
		b.off += int64(len(l))
		return l, nil
	}
	if err == bufio.ErrBufferFull {
		b.buf = append(b.buf[:0], l...)
		for err == bufio.ErrBufferFull {
			if len(b.buf) > maxLine {
				return nil, b.errf(b.off, "line longer than %d bytes", maxLine)
			}
			l, err = b.br.ReadSlice('\n')
			b.buf = append(b.buf, l...)
		}
		l = b.buf
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(l) == 0 {
		return nil, io.EOF
	}
	b.off += int64(len(l))
	return l, nil
}

// block returns the next n bytes.
func (b *base) block(n int) ([]byte, error) {
	var p []byte
	var err error
	if n <= b.br.Size() {
		p, err = b.br.Peek(n)
		if len(p) == n {
			b.br.Discard(n)
		}
	} else {
		if cap(b.buf) < n {
			b.buf = make([]byte, n)
		}
		p = b.buf[:n]
		var k int
		k, err = io.ReadFull(b.br, p)
		p = p[:k]
	}
	if len(p) < n {
		if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, b.truncf(b.off, "record of %d bytes cut short after %d", n, len(p))
		}
		return nil, err
	}
	b.off += int64(n)
	return p, nil
}

// peek returns up to n bytes without consuming them.
func (b *base) peek(n int) ([]byte, error) { return b.br.Peek(n) }
