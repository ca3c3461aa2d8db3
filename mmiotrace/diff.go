package mmiotrace

import (
	"errors"
	"fmt"
	"io"
)

// Access is one register access of a log reduced for comparison: runs of
// identical reads (a polling loop that saw one value) are collapsed into
// one Access with Count > 1.
type Access struct {
	Kind  Kind // KindRead or KindWrite
	Key   RegKey
	Value uint64
	Count int64
	Line  int64 // line of the first record
}

func (a *Access) String() string {
	s := fmt.Sprintf("%s %d %s 0x%x", a.Kind, a.Key.Width, a.Key, a.Value)
	if a.Count > 1 {
		s += fmt.Sprintf(" (x%d)", a.Count)
	}
	return s
}

// Accesses reads the R and W records of a log as a register sequence,
// timestamps and map ids ignored.
func Accesses(in io.Reader) ([]Access, error) {
	rd := NewReader(in)
	defer rd.Close()
	return ReadAccesses(rd)
}

// ReadAccesses is Accesses from a Reader, whose Truncated, Skipped and
// Lost then describe what the sequence misses.
func ReadAccesses(rd *Reader) ([]Access, error) {
	src := newAccessStream(rd)
	var out []Access
	for {
		var a Access
		ok, err := src.next(&a)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, a)
	}
}

// accessStream yields the accesses of a Reader one at a time, runs of
// identical reads collapsed as ReadAccesses collapses them: an access is
// yielded when the record after it differs (or at the end).
type accessStream struct {
	rd      *Reader
	bars    *BARMap
	rec     Record
	pending Access
	have    bool // pending holds an access
	done    bool
	name    string // prefixes read errors when not ""
}

func newAccessStream(rd *Reader) *accessStream {
	return &accessStream{rd: rd, bars: NewBARMap()}
}

// next stores the next access in a; false at the end of the log.
func (s *accessStream) next(a *Access) (bool, error) {
	for !s.done {
		err := s.rd.ReadInto(&s.rec)
		if err == io.EOF {
			s.done = true
			break
		}
		if err != nil {
			if s.name != "" {
				err = fmt.Errorf("%s: %w", s.name, err)
			}
			return false, err
		}
		rec := &s.rec
		s.bars.Observe(rec)
		if rec.Kind != KindRead && rec.Kind != KindWrite {
			continue
		}
		key := KeyOf(s.bars, rec)
		if s.have && rec.Kind == KindRead {
			if p := &s.pending; p.Kind == KindRead && p.Key == key && p.Value == rec.Value {
				p.Count++
				continue
			}
		}
		next := Access{Kind: rec.Kind, Key: key, Value: rec.Value, Count: 1, Line: s.rd.Line()}
		if s.have {
			*a = s.pending
			s.pending = next
			return true, nil
		}
		s.pending, s.have = next, true
	}
	if s.have {
		*a, s.have = s.pending, false
		return true, nil
	}
	return false, nil
}

// DiffOp is one step of an alignment.
type DiffOp struct {
	Op   byte // ' ' same register and value, '~' same register, other value or count, '-' only in A, '+' only in B
	A, B *Access
}

// ErrTooDifferent is returned when the traces differ in more places than
// the diff is allowed to explore.
var ErrTooDifferent = errors.New("traces too different")

// sameReg tells whether two accesses are aligned by a diff: the same kind
// and register.
func sameReg(x, y *Access) bool { return x.Kind == y.Kind && x.Key == y.Key }

// fullDiff aligns two whole access sequences with Myers' algorithm on the
// part between their common prefix and suffix: a shortest edit script,
// giving up beyond maxEdits insertions and deletions unless the part
// between prefix and suffix is empty on one side (then it is all
// insertions or all deletions, of any number). It was Diff before the
// windowed alignment (diffwindow.go), which uses it where both logs' ends
// are in its window, and the tests use it as the oracle.
func fullDiff(a, b []Access, maxEdits int) ([]DiffOp, error) {
	if maxEdits <= 0 {
		maxEdits = 4000
	}
	return alignWhole(a, b, maxEdits)
}

// alignWhole is fullDiff with maxEdits taken as it is (0: no edit).
func alignWhole(a, b []Access, maxEdits int) ([]DiffOp, error) {
	same := sameReg
	var ops []DiffOp
	emit := func(x, y *Access) {
		op := byte(' ')
		if x.Value != y.Value || x.Count != y.Count {
			op = '~'
		}
		ops = append(ops, DiffOp{Op: op, A: x, B: y})
	}
	pre := 0
	for pre < len(a) && pre < len(b) && same(&a[pre], &b[pre]) {
		emit(&a[pre], &b[pre])
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && same(&a[len(a)-1-suf], &b[len(b)-1-suf]) {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, err := myers(ma, mb, same, maxEdits)
	if err != nil {
		return nil, err
	}
	for _, m := range mid {
		switch m.Op {
		case ' ':
			emit(m.A, m.B)
		default:
			ops = append(ops, m)
		}
	}
	for k := 0; k < suf; k++ {
		emit(&a[len(a)-suf+k], &b[len(b)-suf+k])
	}
	return ops, nil
}

// myersMove is where diagonal k starts at step d of Myers' algorithm,
// v[off+k] the furthest x on diagonal k so far: one down from diagonal k+1
// (an insertion) or one right from k-1 (a deletion), whichever is further
// (ties: the deletion).
func myersMove(v []int32, off, k, d int) int {
	if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
		return int(v[off+k+1])
	}
	return int(v[off+k-1]) + 1
}

// myers returns the shortest edit script between a and b.
func myers(a, b []Access, same func(x, y *Access) bool, maxD int) ([]DiffOp, error) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		var ops []DiffOp
		for i := range a {
			ops = append(ops, DiffOp{Op: '-', A: &a[i]})
		}
		for j := range b {
			ops = append(ops, DiffOp{Op: '+', B: &b[j]})
		}
		return ops, nil
	}
	max := n + m
	off := max + 1
	v := make([]int32, 2*max+3)
	var trace [][]int32
	found := -1
	for d := 0; d <= max && d <= maxD; d++ {
		trace = append(trace, append([]int32(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			x := myersMove(v, off, k, d)
			y := x - k
			for x < n && y < m && same(&a[x], &b[y]) {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				found = d
				break
			}
		}
		if found >= 0 {
			break
		}
	}
	if found < 0 {
		return nil, fmt.Errorf("mmiotrace: diff: %w (more than %d insertions and deletions)", ErrTooDifferent, maxD)
	}
	// trace[d] holds v[-d-1 .. d+1] as it was before step d.
	return backtrack(a, b, n, m, found, func(d, k int) int { return int(trace[d][k+d+1]) }), nil
}
