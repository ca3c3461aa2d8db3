package mmiotrace

import (
	"errors"
	"fmt"
)

// The windowed alignment of 'iotap mmio diff': the two logs are read side
// by side and only a bounded stretch of each is held.
//
//   - Where they agree (same kind and register, in order), each pair of
//     accesses is written as it is read and dropped.
//   - Where they diverge, Myers' algorithm runs on a window of the next
//     accesses of each log (diffWindow, doubled up to diffWindowMax when
//     the difference reaches the window's end) and stops at the first
//     edit count whose path runs diffSyncLen accesses in agreement: the
//     logs are in step again. The path up to there is written, and the
//     common run resumes.
//   - When both logs end inside the window, the rest is aligned whole
//     (fullDiff: common suffix stripped, Myers in between), so differences
//     near the end are placed as the whole-log alignment places them.
//
// Differences separated by common runs of diffSyncLen accesses or more are
// aligned as fullDiff aligns them. Where the logs differ in a way a window
// cannot settle (no run of diffSyncLen agreeing accesses within
// diffWindowMax, or a run that agrees by chance on another diagonal, as in
// periodic polling), the alignment is still a valid edit script (applied
// to A it gives B) but may have more edits than the shortest one, or put
// equally short edits elsewhere.
//
// Variables, not constants, so that the tests can make them small.
var (
	diffSyncLen   = 64      // accesses in agreement that end a difference
	diffWindow    = 1 << 15 // accesses of each log looked at for a difference, at first
	diffWindowMax = 1 << 18 // and at most
	diffChunk     = 4096    // accesses read at a time along a common run
)

// tooDifferent is the error of an alignment beyond maxEdits.
func tooDifferent(maxEdits int) error {
	return fmt.Errorf("mmiotrace: diff: %w (more than %d insertions and deletions)", ErrTooDifferent, maxEdits)
}

// accessWindow holds the accesses of one log from the alignment's
// position on, and behind it the common run since the last difference
// (held, not yet emitted): those of a stream (read as needed, the ones
// emitted dropped) or a slice (then the ops point into it).
type accessWindow struct {
	src  *accessStream // nil: buf is a prefix of all
	all  []Access
	buf  []Access
	hold int // buf[hold:head] is the held common run
	head int // buf[head:] is from the position on
	eof  bool
	n    int // accesses read so far
}

func streamWindow(src *accessStream) *accessWindow { return &accessWindow{src: src} }

func sliceWindow(s []Access) *accessWindow { return &accessWindow{all: s, buf: s[:0]} }

func (w *accessWindow) len() int            { return len(w.buf) - w.head }
func (w *accessWindow) at(i int) *Access    { return &w.buf[w.head+i] }
func (w *accessWindow) rest() []Access      { return w.buf[w.head:] }
func (w *accessWindow) drop(k int)          { w.head += k }
func (w *accessWindow) ended() bool         { return w.eof && w.len() == 0 }
func (w *accessWindow) buffered(k int) bool { return w.eof || w.len() >= k }

// fill reads until k accesses are held from the position on or the log
// ends. It may move the accesses held (pointers to them are good until
// the next fill).
func (w *accessWindow) fill(k int) error {
	if w.buffered(k) {
		return nil
	}
	if w.src == nil {
		end := min(w.head+k, len(w.all))
		w.buf = w.all[:end]
		w.n = end
		w.eof = end == len(w.all)
		return nil
	}
	if w.hold > 0 && w.hold >= len(w.buf)/2 {
		n := copy(w.buf, w.buf[w.hold:])
		clear(w.buf[n:])
		w.buf, w.head, w.hold = w.buf[:n], w.head-w.hold, 0
	}
	for w.len() < k {
		w.buf = append(w.buf, Access{})
		ok, err := w.src.next(&w.buf[len(w.buf)-1])
		if !ok || err != nil {
			w.buf = w.buf[:len(w.buf)-1]
			w.eof = err == nil
			return err
		}
		w.n++
	}
	return nil
}

// aligner aligns two logs window by window (see above), handing each
// step to emit in order.
type aligner struct {
	a, b     *accessWindow
	maxEdits int
	edits    int // insertions and deletions so far
	emit     func(op *DiffOp) error
	v, trace []int32
	level    []int
}

// pair emits x and y aligned: ' ' or '~'.
func (al *aligner) pair(x, y *Access) error {
	op := DiffOp{Op: ' ', A: x, B: y}
	if x.Value != y.Value || x.Count != y.Count {
		op.Op = '~'
	}
	return al.emit(&op)
}

// flush emits the first k accesses of the held common run.
func (al *aligner) flush(k int) error {
	a, b := al.a, al.b
	for i := 0; i < k; i++ {
		if err := al.pair(&a.buf[a.hold+i], &b.buf[b.hold+i]); err != nil {
			return err
		}
	}
	a.hold += k
	b.hold += k
	return nil
}

// emitOps emits ops (' ' made '~' where the values differ), counts their
// edits, and moves both logs past them (a difference: nothing is held).
func (al *aligner) emitOps(ops []DiffOp) error {
	if err := al.flush(al.a.head - al.a.hold); err != nil {
		return err
	}
	for i := range ops {
		op := &ops[i]
		var err error
		if op.A != nil && op.B != nil {
			err = al.pair(op.A, op.B)
			al.a.head++
			al.b.head++
		} else {
			al.edits++
			err = al.emit(op)
			if op.A != nil {
				al.a.head++
			} else {
				al.b.head++
			}
		}
		if err != nil {
			return err
		}
	}
	al.a.hold, al.b.hold = al.a.head, al.b.head
	return nil
}

// uptoLastEdit is ops without the aligned accesses after the last edit:
// the common run that follows is the main loop's.
func uptoLastEdit(ops []DiffOp) []DiffOp {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].A == nil || ops[i].B == nil {
			return ops[:i+1]
		}
	}
	return nil
}

func (al *aligner) run() error {
	a, b := al.a, al.b
	for {
		if err := a.fill(diffChunk); err != nil {
			return err
		}
		if err := b.fill(diffChunk); err != nil {
			return err
		}
		if a.ended() && b.ended() {
			return al.flush(a.head - a.hold)
		}
		if a.ended() || b.ended() {
			return al.tail()
		}
		n := min(a.len(), b.len())
		i := 0
		for i < n && sameReg(a.at(i), b.at(i)) {
			i++
		}
		a.drop(i)
		b.drop(i)
		// The run is held (see final) up to a window's length.
		if run := a.head - a.hold; run > diffWindow {
			if err := al.flush(run - diffWindow/2); err != nil {
				return err
			}
		}
		if i < n {
			if err := al.region(); err != nil {
				return err
			}
		}
	}
}

// tail ends the alignment when a log has ended: the rest of the other is
// only in it. As fullDiff, that rest is unbounded when it is the only
// difference; otherwise it is at most the edits left, and aligned by final.
func (al *aligner) tail() error {
	if al.edits > 0 {
		long := al.a
		if long.ended() {
			long = al.b
		}
		if err := long.fill(al.maxEdits - al.edits + 1); err != nil {
			return err
		}
		if !long.eof {
			return tooDifferent(al.maxEdits)
		}
		return al.final()
	}
	if err := al.flush(al.a.head - al.a.hold); err != nil {
		return err
	}
	for _, side := range []struct {
		w  *accessWindow
		op byte
	}{{al.a, '-'}, {al.b, '+'}} {
		for {
			if err := side.w.fill(diffChunk); err != nil {
				return err
			}
			if side.w.ended() {
				break
			}
			for i := 0; i < side.w.len(); i++ {
				al.edits++
				op := DiffOp{Op: side.op}
				if side.op == '-' {
					op.A = side.w.at(i)
				} else {
					op.B = side.w.at(i)
				}
				if err := al.emit(&op); err != nil {
					return err
				}
			}
			side.w.drop(side.w.len())
			side.w.hold = side.w.head
		}
	}
	return nil
}

// region aligns a difference: the logs' next accesses differ. The first
// difference, when it is beyond maxEdits, may still be a block only in
// one log (oneSided).
func (al *aligner) region() error {
	err := al.window1()
	if errors.Is(err, ErrTooDifferent) && al.edits == 0 {
		return al.oneSided()
	}
	return err
}

// window1 aligns a difference window by window.
func (al *aligner) window1() error {
	a, b := al.a, al.b
	budget := al.maxEdits - al.edits
	for w := diffWindow; ; w *= 2 {
		if err := a.fill(w); err != nil {
			return err
		}
		if err := b.fill(w); err != nil {
			return err
		}
		if a.eof != b.eof {
			// One log ends in the window: the other's rest is at most
			// budget longer, or the logs are too different.
			short, long := a, b
			if b.eof {
				short, long = b, a
			}
			if err := long.fill(short.len() + budget + 1); err != nil {
				return err
			}
			if !long.eof {
				return tooDifferent(al.maxEdits)
			}
		}
		if a.eof && b.eof {
			if al.edits > 0 {
				return al.final()
			}
			return al.whole()
		}
		done, err := al.window(a.len(), b.len(), budget)
		if done || err != nil {
			return err
		}
		if w >= diffWindowMax {
			return al.cut(a.len(), b.len(), budget)
		}
	}
}

// whole aligns the rest of both logs, held whole, when it holds their
// only difference: as fullDiff does, so an edit script of insertions only
// or deletions only may be of any length.
func (al *aligner) whole() error {
	ops, err := alignWhole(al.a.rest(), al.b.rest(), al.maxEdits)
	if err != nil {
		return tooDifferent(al.maxEdits)
	}
	return al.emitOps(ops)
}

// final aligns the last difference, both logs' rest held whole, as
// fullDiff aligns it after earlier differences: fullDiff's Myers runs up
// to the logs' common suffix, which may reach back into the common run
// held before this difference (in a periodic stretch, where a shifted run
// agrees too), and so the run from its start is aligned again, up to the
// suffix.
func (al *aligner) final() error {
	a, b := al.a, al.b
	ra, rb := a.buf[a.hold:], b.buf[b.hold:]
	suf := 0
	for suf < len(ra) && suf < len(rb) && sameReg(&ra[len(ra)-1-suf], &rb[len(rb)-1-suf]) {
		suf++
	}
	ops, err := myers(ra[:len(ra)-suf], rb[:len(rb)-suf], sameReg, max(al.maxEdits-al.edits, 0))
	if err != nil {
		return tooDifferent(al.maxEdits)
	}
	for i := 0; i < suf; i++ {
		ops = append(ops, DiffOp{Op: ' ', A: &ra[len(ra)-suf+i], B: &rb[len(rb)-suf+i]})
	}
	a.head, b.head = a.hold, b.hold // the held run is in ops
	if err := al.emitOps(ops); err != nil {
		return err
	}
	if al.edits > al.maxEdits {
		return tooDifferent(al.maxEdits)
	}
	return nil
}

// window runs Myers' algorithm on the first n accesses of a and m of b
// (neither log ends there) up to the first edit count where a path runs
// diffSyncLen accesses in agreement, and emits that path up to its last
// edit. Of several such paths it takes the one whose run goes on the
// longest (a run can agree by chance, as in a periodic stretch, and
// Myers' whole-log path goes on along the longer). It reports false, nil
// when the window is too small to tell: a path reaches its end first.
func (al *aligner) window(n, m, maxD int) (bool, error) {
	a, b := al.a, al.b
	off := maxD + 1
	if cap(al.v) < 2*maxD+3 {
		al.v = make([]int32, 2*maxD+3)
	}
	v := al.v[:2*maxD+3]
	clear(v)
	trace, level := al.trace[:0], al.level[:0]
	defer func() { al.trace, al.level = trace[:0], level[:0] }()
	type run struct{ x, y int }
	var runs []run
	for d := 0; d <= maxD; d++ {
		level = append(level, len(trace))
		trace = append(trace, v[off-d-1:off+d+2]...)
		short := false
		for k := -d; k <= d; k += 2 {
			x := myersMove(v, off, k, d)
			y := x - k
			x0 := x
			for x < n && y < m && x-x0 < diffSyncLen && sameReg(a.at(x), b.at(y)) {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x-x0 >= diffSyncLen {
				runs = append(runs, run{x, y})
			} else if x >= n || y >= m {
				short = true
			}
		}
		if short {
			return false, nil
		}
		if len(runs) == 0 {
			continue
		}
		// The longest run: follow all of them until one is left.
		for ext := 0; len(runs) > 1; ext++ {
			alive := runs[:0]
			for _, r := range runs {
				if r.x+ext >= n || r.y+ext >= m {
					return false, nil // two runs reach the window's end
				}
				if sameReg(a.at(r.x+ext), b.at(r.y+ext)) {
					alive = append(alive, r)
				}
			}
			if len(alive) == 0 {
				runs = runs[:1] // as long as each other: the first
				break
			}
			runs = alive
		}
		get := func(d, k int) int { return int(trace[level[d]+k+d+1]) }
		return true, al.emitOps(uptoLastEdit(backtrack(a.rest(), b.rest(), runs[0].x, runs[0].y, d, get)))
	}
	return false, tooDifferent(al.maxEdits)
}

// cut is the last resort of a difference wider than diffWindowMax: the
// two windows aligned whole as if the logs ended there, the first half of
// that path kept.
func (al *aligner) cut(n, m, budget int) error {
	a, b := al.a.rest()[:n], al.b.rest()[:m]
	ops, err := myers(a, b, sameReg, max(budget, 0))
	if err != nil {
		return tooDifferent(al.maxEdits)
	}
	x, y := 0, 0
	for i := range ops {
		if x >= max(n/2, 1) || y >= max(m/2, 1) {
			ops = ops[:i]
			break
		}
		if ops[i].A != nil {
			x++
		}
		if ops[i].B != nil {
			y++
		}
	}
	if err := al.emitOps(uptoLastEdit(ops)); err != nil {
		return err
	}
	if al.edits > al.maxEdits {
		return tooDifferent(al.maxEdits)
	}
	return nil
}

// backtrack returns the path of Myers' algorithm that ends at (x, y) after
// d edits; get(d, k) is the furthest x on diagonal k before step d.
func backtrack(a, b []Access, x, y, found int, get func(d, k int) int) []DiffOp {
	var rev []DiffOp
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
	return ops
}

// Diff aligns two access sequences by register (kind, width, location),
// ignoring timestamps, as 'iotap mmio diff' aligns two logs: window by
// window (diffwindow.go), which is Myers' shortest edit script wherever
// differences are separated by runs of agreeing accesses, and a valid one
// everywhere. maxEdits bounds the insertions and deletions (0: 4000).
func Diff(a, b []Access, maxEdits int) ([]DiffOp, error) {
	if maxEdits <= 0 {
		maxEdits = 4000
	}
	var ops []DiffOp
	al := &aligner{a: sliceWindow(a), b: sliceWindow(b), maxEdits: maxEdits,
		emit: func(op *DiffOp) error { ops = append(ops, *op); return nil }}
	if err := al.run(); err != nil {
		return nil, err
	}
	return ops, nil
}
