package mmiotrace

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
)

// oneSided is the last resort of a first difference beyond maxEdits: as
// fullDiff, an edit script that is all deletions or all insertions is
// taken whatever its length, when the rest of one log, after a block only
// in it, is the rest of the other. Both rests are read to their ends
// (into temporary files, 48 bytes an access, when they come from
// streams), the shorter compared with the end of the longer, and then
// written out. Otherwise the logs are too different.
func (al *aligner) oneSided() error {
	if err := al.flush(al.a.head - al.a.hold); err != nil {
		return err
	}
	sa, err := spoolRest(al.a)
	if err != nil {
		return err
	}
	defer sa.close()
	sb, err := spoolRest(al.b)
	if err != nil {
		return err
	}
	defer sb.close()
	long, short, op := sa, sb, byte('-')
	if sb.len() > sa.len() {
		long, short, op = sb, sa, '+'
	}
	delta := long.len() - short.len()
	if delta == 0 {
		return tooDifferent(al.maxEdits)
	}
	nextL, err := long.open(delta)
	if err != nil {
		return err
	}
	nextS, err := short.open(0)
	if err != nil {
		return err
	}
	for i := 0; i < short.len(); i++ {
		x, err := nextL()
		if err != nil {
			return err
		}
		y, err := nextS()
		if err != nil {
			return err
		}
		if !sameReg(x, y) {
			return tooDifferent(al.maxEdits)
		}
	}
	if nextL, err = long.open(0); err != nil {
		return err
	}
	if nextS, err = short.open(0); err != nil {
		return err
	}
	for i := 0; i < long.len(); i++ {
		x, err := nextL()
		if err != nil {
			return err
		}
		if i < delta {
			o := DiffOp{Op: op}
			if op == '-' {
				o.A = x
			} else {
				o.B = x
			}
			al.edits++
			err = al.emit(&o)
		} else {
			var y *Access
			if y, err = nextS(); err != nil {
				return err
			}
			if op == '-' {
				err = al.pair(x, y)
			} else {
				err = al.pair(y, x)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// accessSeq is the rest of one log, read to its end: in a slice, or
// spooled to a temporary file.
type accessSeq struct {
	s []Access // from a slice
	f *os.File // or spooled
	n int
}

func (q *accessSeq) len() int { return q.n }

const spooledAccess = 48

// spoolRest reads the rest of w's log from its position to the end.
func spoolRest(w *accessWindow) (*accessSeq, error) {
	if w.src == nil {
		w.fill(len(w.all) - w.head)
		q := &accessSeq{s: w.rest(), n: w.len()}
		w.drop(w.len())
		w.hold = w.head
		return q, nil
	}
	f, err := os.CreateTemp("", "iotap-mmio-diff-*")
	if err != nil {
		return nil, err
	}
	q := &accessSeq{f: f}
	bw := bufio.NewWriterSize(f, 64<<10)
	var rec [spooledAccess]byte
	for {
		for i := 0; i < w.len(); i++ {
			encodeAccess(&rec, w.at(i))
			bw.Write(rec[:])
			q.n++
		}
		w.drop(w.len())
		w.hold = w.head
		if w.eof {
			break
		}
		if err := w.fill(diffChunk); err != nil {
			q.close()
			return nil, err
		}
	}
	if err := bw.Flush(); err != nil {
		q.close()
		return nil, err
	}
	return q, nil
}

// open returns a function yielding the accesses from the from-th on (a
// spooled one is good until the next call).
func (q *accessSeq) open(from int) (func() (*Access, error), error) {
	if q.f == nil {
		i := from
		return func() (*Access, error) { i++; return &q.s[i-1], nil }, nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(q.f, int64(from)*spooledAccess, int64(q.n-from)*spooledAccess), 64<<10)
	var rec [spooledAccess]byte
	var a Access
	return func() (*Access, error) {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			return nil, err
		}
		decodeAccess(&rec, &a)
		return &a, nil
	}, nil
}

func (q *accessSeq) close() {
	if q.f != nil {
		q.f.Close()
		os.Remove(q.f.Name())
	}
}

func encodeAccess(rec *[spooledAccess]byte, a *Access) {
	le := binary.LittleEndian
	rec[0] = byte(a.Kind)
	le.PutUint16(rec[1:], a.Key.Dev.Domain)
	rec[3], rec[4], rec[5] = a.Key.Dev.Bus, a.Key.Dev.Dev, a.Key.Dev.Fn
	rec[6] = 0
	if a.Key.HasBAR {
		rec[6] = 1
	}
	rec[7] = a.Key.Width
	le.PutUint64(rec[8:], uint64(a.Key.BAR))
	le.PutUint64(rec[16:], a.Key.Offset)
	le.PutUint64(rec[24:], a.Value)
	le.PutUint64(rec[32:], uint64(a.Count))
	le.PutUint64(rec[40:], uint64(a.Line))
}

func decodeAccess(rec *[spooledAccess]byte, a *Access) {
	le := binary.LittleEndian
	a.Kind = Kind(rec[0])
	a.Key.Dev.Domain = le.Uint16(rec[1:])
	a.Key.Dev.Bus, a.Key.Dev.Dev, a.Key.Dev.Fn = rec[3], rec[4], rec[5]
	a.Key.HasBAR = rec[6] == 1
	a.Key.Width = rec[7]
	a.Key.BAR = int(le.Uint64(rec[8:]))
	a.Key.Offset = le.Uint64(rec[16:])
	a.Value = le.Uint64(rec[24:])
	a.Count = int64(le.Uint64(rec[32:]))
	a.Line = int64(le.Uint64(rec[40:]))
}
