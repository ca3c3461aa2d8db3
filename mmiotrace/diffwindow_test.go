package mmiotrace

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
)

// setDiffWindow makes the windowed alignment's sizes small for a test.
func setDiffWindow(t testing.TB, sync, win, winMax, chunk int) {
	old := [4]int{diffSyncLen, diffWindow, diffWindowMax, diffChunk}
	diffSyncLen, diffWindow, diffWindowMax, diffChunk = sync, win, winMax, chunk
	t.Cleanup(func() { diffSyncLen, diffWindow, diffWindowMax, diffChunk = old[0], old[1], old[2], old[3] })
}

// checkScript fails unless ops is an edit script of a into b: in order,
// every access of a deleted or aligned, every access of b inserted or
// aligned, aligned pairs of the same kind and register, ' ' exactly where
// value and count agree. It returns the insertions and deletions.
func checkScript(t testing.TB, a, b []Access, ops []DiffOp) int {
	t.Helper()
	var ia, ib, edits int
	for i, op := range ops {
		switch op.Op {
		case ' ', '~':
			if ia >= len(a) || ib >= len(b) || *op.A != a[ia] || *op.B != b[ib] || !sameReg(op.A, op.B) {
				t.Fatalf("op %d %c: not the next accesses of A (%d) and B (%d), or other registers", i, op.Op, ia, ib)
			}
			if (op.Op == ' ') != (op.A.Value == op.B.Value && op.A.Count == op.B.Count) {
				t.Fatalf("op %d: %c for values %x/%x counts %d/%d", i, op.Op, op.A.Value, op.B.Value, op.A.Count, op.B.Count)
			}
			ia++
			ib++
		case '-':
			if ia >= len(a) || *op.A != a[ia] || op.B != nil {
				t.Fatalf("op %d: deletion not of A's next access (%d)", i, ia)
			}
			ia++
			edits++
		case '+':
			if ib >= len(b) || *op.B != b[ib] || op.A != nil {
				t.Fatalf("op %d: insertion not of B's next access (%d)", i, ib)
			}
			ib++
			edits++
		default:
			t.Fatalf("op %d: %q", i, op.Op)
		}
	}
	if ia != len(a) || ib != len(b) {
		t.Fatalf("script covers %d of %d accesses of A and %d of %d of B", ia, len(a), ib, len(b))
	}
	return edits
}

// oracleOutput is what 'iotap mmio diff' printed before the windowed
// alignment: both logs read whole, fullDiff, WriteDiff.
func oracleOutput(t testing.TB, la, lb []byte, maxEdits int, f DiffFormat) (string, error) {
	a, err := Accesses(bytes.NewReader(la))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Accesses(bytes.NewReader(lb))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := fullDiff(a, b, maxEdits)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if f.JSON {
		out.Write(AppendNDJSONInput(AppendNDJSONInput(nil, "a.log", ""), "b.log", ""))
	}
	if err := WriteDiff(&out, a, b, ops, f); err != nil {
		t.Fatal(err)
	}
	return out.String(), nil
}

// sameAsOracle compares DiffLogs on two logs with the oracle, text and
// NDJSON, byte for byte (or the same error, and no output).
func sameAsOracle(t *testing.T, name string, la, lb []byte, maxEdits int, formats ...DiffFormat) {
	t.Helper()
	for _, f := range formats {
		want, werr := oracleOutput(t, la, lb, maxEdits, f)
		var out bytes.Buffer
		gerr := DiffLogs(&out, NewDiffLog(bytes.NewReader(la), "a.log", ""), NewDiffLog(bytes.NewReader(lb), "b.log", ""), maxEdits, f)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("%s %+v: error %v, the whole-log diff's %v", name, f, gerr, werr)
			continue
		}
		if got := out.String(); got != want {
			t.Errorf("%s %+v: output differs from the whole-log diff's at byte %d (%d and %d bytes):\n%s\n--- whole-log:\n%s",
				name, f, firstDiff(got, want), len(got), len(want), around(got, firstDiff(got, want)), around(want, firstDiff(got, want)))
		}
	}
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func around(s string, i int) string {
	lo := strings.LastIndexByte(s[:min(i, len(s))], '\n')
	lo = max(lo-400, 0)
	return s[lo:min(i+400, len(s))]
}

var testdataLogs = []string{
	"../testdata/mmiotrace/e1000-probe.log",
	"testdata/e1000-bind.log",
	"testdata/kinds.log",
	"testdata/e1000-trace-file.log.xz",
	"../cmd/iotap/testdata/e1000-probe-cut.log",
	"../testdata/capture/mmio.log.zst",
}

// TestDiffMatchesFullOnTestdata: every ordered pair of the repository's
// mmiotrace logs (each with itself too) is aligned as the whole-log diff
// aligns it (the same steps, or the same error), with the windows as they
// are and (where the whole-log diff does not give up) with a window of 256
// accesses and runs of 16, so that the windowed path (not only the whole
// rest) aligns them; and DiffLogs writes
// the whole-log diff's bytes, text and NDJSON, with and without --all.
func TestDiffMatchesFullOnTestdata(t *testing.T) {
	var logs [][]byte
	var accs [][]Access
	for _, p := range testdataLogs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		acc, err := Accesses(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		logs, accs = append(logs, data), append(accs, acc)
	}
	type pair struct {
		i, j int
		want []DiffOp
		werr error
	}
	var pairs []pair
	for i := range logs {
		for j := range logs {
			want, werr := fullDiff(accs[i], accs[j], 4000)
			pairs = append(pairs, pair{i, j, want, werr})
		}
	}
	streamedGiveUp := false
	check := func(small bool) {
		for _, p := range pairs {
			if small && p.werr != nil {
				continue // the small window's last resort is slow on logs that differ throughout
			}
			name := testdataLogs[p.i] + " vs " + testdataLogs[p.j]
			got, gerr := Diff(accs[p.i], accs[p.j], 4000)
			if fmt.Sprint(gerr) != fmt.Sprint(p.werr) || !opsEqual(got, p.want) {
				t.Errorf("%s (small window %v): %d steps, error %v; whole-log: %d steps, error %v", name, small, len(got), gerr, len(p.want), p.werr)
			}
			if small {
				continue
			}
			formats := []DiffFormat{{}, {JSON: true}, {All: true}, {All: true, JSON: true}}
			if p.werr != nil {
				// Giving up is slow (Myers to 4,000 edits); one pair
				// through DiffLogs is enough for its error and silence.
				if streamedGiveUp {
					continue
				}
				streamedGiveUp, formats = true, formats[:1]
			}
			sameAsOracle(t, name, logs[p.i], logs[p.j], 4000, formats...)
		}
	}
	check(false)
	setDiffWindow(t, 16, 256, 4096, 64)
	check(true)
}

// editLog returns the lab log's body repeated copies times (a log of
// about 11,000 accesses per copy) and a copy of it with n edits of its R
// and W lines spread at random, at least gap lines apart: a line dropped,
// a line doubled, a write to a register the log never touches inserted,
// another value, another address.
func editLog(t testing.TB, rnd *rand.Rand, copies, n, gap int) (a, b []byte) {
	data, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	head := 0
	for head < len(lines) && !strings.HasPrefix(lines[head], "R ") && !strings.HasPrefix(lines[head], "W ") {
		head++
	}
	all := append([]string(nil), lines[:head]...)
	for c := 0; c < copies; c++ {
		all = append(all, lines[head:]...)
	}
	var sa, sb strings.Builder
	next := head + rnd.Intn(gap*2)
	for i, l := range all {
		sa.WriteString(l)
		if i < next || !(strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ")) {
			sb.WriteString(l)
			continue
		}
		next = i + gap + rnd.Intn(gap*2)
		f := strings.Fields(l)
		switch rnd.Intn(5) {
		case 0: // dropped
		case 1: // doubled
			sb.WriteString(l + l)
		case 2: // a write to a register nobody touches, after the line
			sb.WriteString(l + "W 4 " + f[2] + " 1 0xfebc1ff0 0x" + fmt.Sprintf("%x", rnd.Intn(1<<16)) + " 0x0 0\n")
		case 3: // another value
			f[5] = fmt.Sprintf("0x%x", rnd.Uint32())
			sb.WriteString(strings.Join(f, " ") + "\n")
		case 4: // another address
			f[4] = "0xfebc1ff8"
			sb.WriteString(strings.Join(f, " ") + "\n")
		}
	}
	return []byte(sa.String()), []byte(sb.String())
}

// TestDiffMatchesFullOnLocalEdits: logs of 12 copies of the lab log (about
// 130,000 accesses, four times the first window) against a copy with
// edits spread through it give the whole-log diff's output byte for byte,
// for edits 200 lines apart or more, and with a small window for edits 40
// lines apart or more.
func TestDiffMatchesFullOnLocalEdits(t *testing.T) {
	rnd := rand.New(rand.NewSource(15))
	for iter := 0; iter < 6; iter++ {
		a, b := editLog(t, rnd, 12, 0, 2000+rnd.Intn(20000))
		sameAsOracle(t, fmt.Sprintf("iter %d", iter), a, b, 4000, DiffFormat{}, DiffFormat{JSON: true})
	}
	setDiffWindow(t, 16, 512, 8192, 64)
	for iter := 0; iter < 6; iter++ {
		a, b := editLog(t, rnd, 3, 0, 40+rnd.Intn(400))
		sameAsOracle(t, fmt.Sprintf("small window, iter %d", iter), a, b, 4000, DiffFormat{}, DiffFormat{JSON: true})
	}
}

// TestDiffValidScript: random sequences over a few registers and values
// (where many alignments are equally short and chance runs abound) with
// tiny windows give a valid edit script, never fewer edits than the
// shortest (fullDiff's, checked against the LCS), and the shortest where
// both fit in the window; beyond maxEdits, ErrTooDifferent.
func TestDiffValidScript(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	for iter := 0; iter < 2000; iter++ {
		setDiffWindow(t, 1+rnd.Intn(6), 1+rnd.Intn(16), 1+rnd.Intn(64), 1+rnd.Intn(8))
		a, b := randomAccesses(rnd, rnd.Intn(120)), randomAccesses(rnd, rnd.Intn(120))
		if rnd.Intn(2) == 0 { // b: a with a few edits
			b = append([]Access(nil), a...)
			for e := rnd.Intn(5); e > 0 && len(b) > 0; e-- {
				i := rnd.Intn(len(b))
				b = append(b[:i], b[i+1:]...)
			}
		}
		ops, err := Diff(a, b, 1000)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		edits := checkScript(t, a, b, ops)
		if min := len(a) + len(b) - 2*lcsLen(a, b); edits < min {
			t.Fatalf("iter %d: %d edits, fewer than the shortest %d", iter, edits, min)
		}
		full, _ := fullDiff(a, b, 1000)
		if len(a) < diffWindow && len(b) < diffWindow && !opsEqual(ops, full) {
			t.Fatalf("iter %d: both in the window, yet not the whole-log alignment", iter)
		}
		if edits > 0 {
			if _, err := Diff(a, b, edits-1); !errors.Is(err, ErrTooDifferent) && edits-1 > 0 {
				// Allowed only when the edits are a single block of
				// insertions or deletions (fullDiff's exception).
				if full, _ := fullDiff(a, b, edits-1); full == nil {
					t.Fatalf("iter %d: %d edits accepted with maxEdits %d: %v", iter, edits, edits-1, err)
				}
			}
		}
	}
}

func randomAccesses(rnd *rand.Rand, n int) []Access {
	s := make([]Access, n)
	for i := range s {
		s[i] = acc(Kind(1+rnd.Intn(2)), uint64(rnd.Intn(4)*4), uint64(rnd.Intn(2)))
		s[i].Line = int64(i + 1)
	}
	return s
}

func opsEqual(x, y []DiffOp) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// FuzzDiff: any two sequences, any window sizes: never a panic, always a
// valid edit script or ErrTooDifferent.
func FuzzDiff(f *testing.F) {
	f.Add([]byte{3, 8, 32, 4, 10}, []byte("abcabcabd"), []byte("abcaabcd"))
	f.Add([]byte{1, 1, 1, 1, 2}, []byte("aaaaaaaa"), []byte("aaab"))
	f.Add([]byte{}, []byte(""), []byte("xyz"))
	f.Fuzz(func(t *testing.T, params, x, y []byte) {
		p := func(i int) int {
			if i < len(params) {
				return 1 + int(params[i])%64
			}
			return 8
		}
		setDiffWindow(t, p(0), p(1), p(2), p(3))
		seq := func(s []byte) []Access {
			out := make([]Access, len(s))
			for i, c := range s {
				out[i] = acc(Kind(1+c>>7), uint64(c&7)*4, uint64(c>>3&15))
				out[i].Line = int64(i + 1)
			}
			return out
		}
		a, b := seq(x), seq(y)
		ops, err := Diff(a, b, p(4))
		if err != nil {
			if !errors.Is(err, ErrTooDifferent) {
				t.Fatal(err)
			}
			return
		}
		checkScript(t, a, b, ops)
	})
}

// TestDiffOneSidedBlock: a log of 20,000 accesses to random registers
// against itself with a block of 5,000 records cut out (wider than
// maxEdits): the whole-log diff takes it, all deletions (or, swapped, all
// insertions), whatever maxEdits, and so does the windowed one, byte for
// byte, the block in the middle or at the start, read from streams (the
// rests spooled to temporary files) or slices; with one more edit after
// the block both give up. (In a periodic log the window may first find a
// shorter path through the block and then give up: mmio.md.)
func TestDiffOneSidedBlock(t *testing.T) {
	setDiffWindow(t, 64, 8192, 16384, 64)
	data, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	var long []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") {
			break
		}
		long = append(long, l)
	}
	head := len(long)
	rnd := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		long = append(long, fmt.Sprintf("%c 4 1.%06d 1 0x%x 0x%x 0x0 0\n", "RW"[rnd.Intn(2)], i, 0xfebc0000+4*rnd.Intn(1<<15), rnd.Intn(1<<20)))
	}
	a := []byte(strings.Join(long, ""))
	b := []byte(strings.Join(long[:9000], "") + strings.Join(long[14000:], ""))
	want, err := oracleOutput(t, a, b, 100, DiffFormat{})
	if err != nil || !strings.HasSuffix(want, "5000 only in A, 0 only in B\n") {
		t.Fatalf("the whole-log diff did not take the block: %v\n%s", err, want[max(len(want)-300, 0):])
	}
	sameAsOracle(t, "block only in A", a, b, 100, DiffFormat{}, DiffFormat{JSON: true})
	sameAsOracle(t, "block only in B", b, a, 100, DiffFormat{})
	sameAsOracle(t, "block at the start", a, []byte(strings.Join(long[:head], "")+strings.Join(long[head+5000:], "")), 100, DiffFormat{})
	accA, _ := Accesses(bytes.NewReader(a))
	accB, _ := Accesses(bytes.NewReader(b))
	ops, err := Diff(accA, accB, 100)
	full, ferr := fullDiff(accA, accB, 100)
	if err != nil || ferr != nil || !opsEqual(ops, full) {
		t.Errorf("slices: %d steps, error %v; whole-log: %d steps, error %v", len(ops), err, len(full), ferr)
	}
	// Another edit after the block: no longer one-sided.
	edited := strings.Join(long[:9000], "") + strings.Join(long[14000:17000], "") + "W 4 1.0 1 0xfebc1ff2 0x1 0x0 0\n" + strings.Join(long[17000:], "")
	if out, err := oracleOutput(t, a, []byte(edited), 100, DiffFormat{}); !errors.Is(err, ErrTooDifferent) {
		t.Fatalf("the whole-log diff took a block and another edit beyond maxEdits:\n%s", out)
	}
	sameAsOracle(t, "block and another edit", a, []byte(edited), 100, DiffFormat{})
}
