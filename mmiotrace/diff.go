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
	bars := NewBARMap()
	var out []Access
	var rec Record
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		bars.Observe(&rec)
		if rec.Kind != KindRead && rec.Kind != KindWrite {
			continue
		}
		a := Access{Kind: rec.Kind, Key: KeyOf(bars, &rec), Value: rec.Value, Count: 1, Line: rd.Line()}
		if n := len(out); n > 0 && a.Kind == KindRead {
			if p := &out[n-1]; p.Kind == KindRead && p.Key == a.Key && p.Value == a.Value {
				p.Count++
				continue
			}
		}
		out = append(out, a)
	}
}

// DiffOp is one step of an alignment.
type DiffOp struct {
	Op   byte // ' ' same register and value, '~' same register, other value or count, '-' only in A, '+' only in B
	A, B *Access
}

// ErrTooDifferent is returned when the traces differ in more places than
// the diff is allowed to explore.
var ErrTooDifferent = errors.New("traces too different")

// Diff aligns two access sequences by register (kind, width, location),
// ignoring timestamps, with Myers' algorithm on the part between their
// common prefix and suffix. maxEdits bounds the work (0: 4000).
func Diff(a, b []Access, maxEdits int) ([]DiffOp, error) {
	if maxEdits <= 0 {
		maxEdits = 4000
	}
	same := func(x, y *Access) bool { return x.Kind == y.Kind && x.Key == y.Key }
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
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
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
	// Backtrack. trace[d] holds v[-d-1 .. d+1] as it was before step d.
	get := func(d, k int) int { return int(trace[d][k+d+1]) }
	var rev []DiffOp
	x, y := n, m
	for d := found; d > 0; d-- {
		k := x - y
		pk := k - 1
		if k == -d || (k != d && get(d, k-1) < get(d, k+1)) {
			pk = k + 1
		}
		px := get(d, pk)
		py := px - pk
		mx, my := px+1, py // deletion
		if pk == k+1 {
			mx, my = px, py+1 // insertion
		}
		for x > mx && y > my {
			rev = append(rev, DiffOp{Op: ' ', A: &a[x-1], B: &b[y-1]})
			x--
			y--
		}
		if pk == k+1 {
			rev = append(rev, DiffOp{Op: '+', B: &b[py]})
		} else {
			rev = append(rev, DiffOp{Op: '-', A: &a[px]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		rev = append(rev, DiffOp{Op: ' ', A: &a[x-1], B: &b[y-1]})
		x--
		y--
	}
	ops := make([]DiffOp, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	return ops, nil
}
