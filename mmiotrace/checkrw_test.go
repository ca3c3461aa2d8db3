package mmiotrace

import (
	"bytes"
	"math/rand"
	"os"
	"testing"
)

// checkShapeLine compares the filter's shape check (checkRWLines) with
// the reference parser on one input, with the shapes in sh (nil: none
// yet): whenever checkRWLines takes the line, the reference accepts it,
// ends at the same newline and gives the same kind, width, map id and
// address; the portable shape match agrees with the amd64 one; and the
// check gives the same answer whether or not the line is one the filter
// may keep. It returns whether the line was taken.
func checkShapeLine(t testing.TB, b []byte, sh *lineShapes) bool {
	t.Helper()
	if len(b) < rwFastLen {
		pad := bytes.Repeat([]byte("0"), rwFastLen-len(b))
		b = append(b[:len(b):len(b)], pad...)
	}
	if sh == nil {
		sh = new(lineShapes)
	}
	a := (*rwWindow)(b)
	for k := range sh.s {
		// matchWords refuses every byte >= 0x80 (they would carry into
		// the next), also where the shape allows anything.
		s := &sh.s[k]
		m, mw := s.match(a), s.matchWords(a)
		if mw && !m || m != mw && !bytes.ContainsFunc(b[:16*s.nv], func(r rune) bool { return r >= 0x80 }) {
			t.Fatalf("%q: shape %d: match %v, matchWords %v", b, k, m, mw)
		}
	}
	keep := *sh // the same shapes for the run that keeps nothing
	var r Record
	n, lines, cand := checkRWLines(b, 0, 0, &r, sh)
	var none KindSet
	none.Add(KindMap)
	var r3 Record
	n3, lines3, cand3 := checkRWLines(b, none, 0, &r3, &keep)
	if n == 0 {
		if lines != 0 || cand || n3 != 0 || lines3 != 0 || cand3 {
			t.Fatalf("%q: nothing taken but %d lines, candidate %v; keeping nothing: %d bytes, %d lines, %v", b, lines, cand, n3, lines3, cand3)
		}
		return false
	}
	// Keeping nothing, the check goes on past the first line: every line
	// it takes must be one the reference accepts.
	if lines != 1 || !cand || n3 < n || cand3 || int(lines3) != bytes.Count(b[:n3], []byte("\n")) {
		t.Fatalf("%q: %d bytes, %d lines, candidate %v; keeping nothing: %d bytes, %d lines, candidate %v", b, n, lines, cand, n3, lines3, cand3)
	}
	for _, l := range bytes.SplitAfter(b[:n3], []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var ref Record
		l = append(l[:len(l):len(l)], bytes.Repeat([]byte("0"), rwFastLen)...)
		if end, bad := parseRWFields(l, &ref); bad != "" || l[end] != '\n' || (l[0] != 'R' && l[0] != 'W') || l[1] != ' ' {
			t.Fatalf("%q: line %q taken, reference: end %d, bad %q", b, l, end, bad)
		}
	}
	end := bytes.IndexByte(b, '\n')
	r2 := Record{Kind: KindRead}
	if b[0] == 'W' {
		r2.Kind = KindWrite
	}
	end2, bad := parseRWFields(b, &r2)
	if end != n-1 || bad != "" || end2 != end || b[1] != ' ' || (b[0] != 'R' && b[0] != 'W') {
		t.Fatalf("%q: shape check takes %d bytes, reference: newline at %d, end %d, bad %q", b, n, end, end2, bad)
	}
	if r.Kind != r2.Kind || r.Width != r2.Width || r.MapID != r2.MapID || r.Phys != r2.Phys || !bytes.Equal(r.Line, b[:end]) {
		t.Fatalf("%q: shape check %+v, reference %+v", b, r, r2)
	}
	return true
}

// shapesOf returns shapes built from the given lines.
func shapesOf(t testing.TB, lines ...string) *lineShapes {
	sh := new(lineShapes)
	for _, l := range lines {
		b := []byte(l)
		b = append(b, bytes.Repeat([]byte("0"), rwFastLen)...)
		if !checkShapeLine(t, b, sh) {
			t.Fatalf("%q: no shape", l)
		}
	}
	return sh
}

// TestCheckRWMatchesParse: with no shape yet (the line's own is built)
// and with shapes built from kernel-shaped lines, on those lines with
// every byte value in every position and with random mutations, the
// filter's shape check never takes what the reference rejects and agrees
// on the fields the filter uses.
func TestCheckRWMatchesParse(t *testing.T) {
	for _, s := range rwShapes {
		if got := checkShapeLine(t, []byte(s.line), nil); got && !s.fast {
			t.Errorf("%q: taken by the shape check, not by the fast path", s.line)
		}
	}
	// Lines with a shape (1 to 8 or 16 hex digits): those of rwShapes
	// and more.
	base := []string{
		"R 1 3.000004 2 0xfebc0000 0x5 0xffffffff81024d75 123\n",
		"W 2 1234567.000001 1234567 0xfebc00 0xffffffff 0x0000000000000000 1234567\n",
		"R 8 0.999999 0 0x1234567 0xdeadbeefdeadbeef 0xffffffff8190ae24 7\n",
		"W 4 12.345678 3 0xabcdef 0x0 0x12345678 99\n",
	}
	for _, s := range rwShapes {
		if checkShapeLine(t, []byte(s.line), nil) {
			base = append(base, s.line)
		}
	}
	if len(base) < 8 {
		t.Fatalf("only %d lines with a shape", len(base))
	}
	for _, l := range base {
		b := []byte(l)
		for pos := 0; pos < len(b); pos++ {
			orig := b[pos]
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				checkShapeLine(t, b, nil)
				if checkShapeLine(t, b, shapesOf(t, l)) != checkShapeLine(t, b, nil) {
					t.Fatalf("%q: taken with its own shape but not with a new one, or the reverse", b)
				}
			}
			b[pos] = orig
		}
	}
	rnd := rand.New(rand.NewSource(7))
	const alpha = "0123456789abcdefABCDEFx. -\n\x80\xff/:`@GRW"
	sh := shapesOf(t, base[:4]...)
	for iter := 0; iter < 200000; iter++ {
		l := base[rnd.Intn(len(base))]
		b := []byte(l)
		for k := rnd.Intn(4); k >= 0; k-- {
			b[rnd.Intn(len(b))] = alpha[rnd.Intn(len(alpha))]
		}
		if rnd.Intn(4) == 0 { // drop or duplicate a byte: fields of other lengths
			p := rnd.Intn(len(b))
			if rnd.Intn(2) == 0 {
				b = append(b[:p], b[p+1:]...)
			} else {
				b = append(b[:p+1], b[p:]...)
			}
		}
		checkShapeLine(t, b, nil)
		s := *sh
		checkShapeLine(t, b, &s)
	}
}

// TestCheckRWTakesKernelLines: nearly every R/W line of the two
// recorded e1000 logs is taken by the shape check, and the shapes stay on.
func TestCheckRWTakesKernelLines(t *testing.T) {
	for _, p := range []string{"testdata/e1000-bind.log", "../testdata/mmiotrace/e1000-probe.log"} {
		log, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sh := new(lineShapes)
		rw, taken := 0, 0
		for _, l := range bytes.SplitAfter(log, []byte("\n")) {
			if len(l) > 2 && (l[0] == 'R' || l[0] == 'W') && l[1] == ' ' {
				rw++
				if checkShapeLine(t, l, sh) {
					taken++
				}
			}
		}
		t.Logf("%s: %d of %d R/W lines taken; %d lines no shape matched, hits %v", p, taken, rw, sh.misses, sh.hits)
		if rw == 0 || taken < rw*9/10 || sh.off {
			t.Errorf("%s: %d of %d R/W lines taken, shapes off %v", p, taken, rw, sh.off)
		}
	}
}

func FuzzCheckRW(f *testing.F) {
	for _, s := range rwShapes {
		f.Add([]byte(s.line))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkShapeLine(t, b, nil)
		checkShapeLine(t, b, shapesOf(t, rwShapes[0].line, rwShapes[1].line, rwShapes[3].line))
	})
}

// TestCheckRWShapesOff: on a log whose lines change shape all the time
// (genLog: values of every length) the shapes turn themselves off; on
// lines of a few shapes they stay on. Either way the filter keeps what
// the one-worker reference filter keeps (filter tests, FuzzFilterMatchesReader).
func TestCheckRWShapesOff(t *testing.T) {
	var f Filter
	f.Kinds.Add(KindWrite)
	run := func(data []byte) *lineShapes {
		sh := new(lineShapes)
		for len(data) > rwFastLen && !sh.off {
			data, _, _, _ = checkRW(&f, data, nil, sh)
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				data = data[i+1:]
			}
		}
		return sh
	}
	if sh := run([]byte(genLog(5000, 9))); !sh.off {
		t.Errorf("shapes still on for genLog: %d misses, hits %v", sh.misses, sh.hits)
	}
	var b []byte
	for i := 0; i < 2000; i++ {
		l := rwShapes[0].line
		if i%10 == 0 {
			l = rwShapes[1+i%3].line
		}
		b = append(b, l...)
	}
	if sh := run(b); sh.off {
		t.Errorf("shapes off for lines mostly of one shape: %d misses, hits %v", sh.misses, sh.hits)
	}
}
