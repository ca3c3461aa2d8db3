package mmiotrace

import (
	"bytes"
	"math/bits"
	"math/rand"
	"os"
	"reflect"
	"testing"
)

// checkRWFast compares the fixed-shape fast path with the reference
// parser on one input: whenever the fast path accepts, the reference
// accepts too, ends at the same newline and fills the same fields. It
// returns whether the fast path accepted.
func checkRWFast(t testing.TB, b []byte) bool {
	t.Helper()
	if len(b) < rwFastLen {
		pad := make([]byte, rwFastLen-len(b))
		for i := range pad {
			pad[i] = '0'
		}
		b = append(b[:len(b):len(b)], pad...)
	}
	var r1, r3 Record
	end, ok := parseRWFast(b, &r1, true)
	end3, ok3 := parseRWFast(b, &r3, false)
	if ok3 != ok || end3 != end {
		t.Fatalf("%q: fast path with conversion %v (end %d), without %v (end %d)", b, ok, end, ok3, end3)
	}
	if !ok {
		return false
	}
	r2 := Record{Kind: KindRead, Line: b[:end]}
	if b[0] == 'W' {
		r2.Kind = KindWrite
	}
	end2, bad := parseRWFields(b, &r2)
	if bad != "" || end2 != end || b[end] != '\n' || b[1] != ' ' || (b[0] != 'R' && b[0] != 'W') {
		t.Fatalf("%q: fast path accepts (end %d), reference: end %d, bad %q", b, end, end2, bad)
	}
	if !reflect.DeepEqual(r1, r2) {
		t.Fatalf("%q: fast %+v, reference %+v", b, r1, r2)
	}
	if r3.Kind != r2.Kind || r3.Width != r2.Width || r3.MapID != r2.MapID || r3.Phys != r2.Phys {
		t.Fatalf("%q: fast without conversion %+v, reference %+v", b, r3, r2)
	}
	return true
}

// rwShapes are R/W lines of the kernel's shape (which the fast path must
// take) followed by ones it leaves to the reference parser.
var rwShapes = []struct {
	line string
	fast bool
}{
	{"R 4 8.288891 1 0xfebc0008 0x80080783 0x0 0\n", true},
	{"W 4 2.000132 1 0xfebc5404 0xae10a901 0xffffffff819044bf 0\n", true},
	{"R 8 1234567.999999 9999999 0xfebc0000fe 0xdeadbeefdeadbeef 0xffffffff8190ae24 1234567\n", true},
	{"W 1 0.000000 0 0x0 0x0 0x0 0\n", true},
	{"R 2 12.000003 12 0x123456789abcdef 0xffff 0x1234567 42\n", true},
	{"R 4 1.000001 1 0xffffffffffffffff 0xffffffffffffffff 0xffffffffffffffff 0\n", true},
	{"R 4 0012.000001 01 0x0000000000000001 0x000000000000000 0x00000000 00\n", true},
	{"W 1 1.5 2 0xfebc0001 0x5 0xffffffff81024d75 0\n", false},
	{"R 2 100.000000000 1 0xABCDEF01 0xAbCd 0xFFFFFFFF8190AE24 0\n", false},
	{"R 8 12.123456 -1 0xfebc0000fe 0xdeadbeefdeadbeef 0xffffffff8190ae24 12345\n", false},
	{"R 4 12345678.000001 1 0x1 0x2 0x3 0\n", false},
	{"R 4 1.000001 12345678 0x1 0x2 0x3 0\n", false},
	{"R 4 1.000001 1 0x1 0x2 0x3 12345678\n", false},
	{"R 4 1.000001 1 0x1 0x2 0x3 0", false},
	{"R 4 1.000001 1 0x1 0x2 0x3 0 \n", false},
	{"R 4 1.000001 1 0x11111111111111111 0x2 0x3 0\n", false},
	{"R 3 1.000001 1 0x1 0x2 0x3 0\n", false},
	{"R 04 1.000001 1 0x1 0x2 0x3 0\n", false},
	{"R 4 1 1 0x1 0x2 0x3 0\n", false},
}

// TestRWFastMatchesParse: on kernel-shaped lines with every byte value in
// every position, and with random multi-byte mutations, the fast path
// never accepts what the reference rejects and agrees on every field.
func TestRWFastMatchesParse(t *testing.T) {
	for _, s := range rwShapes {
		if got := checkRWFast(t, []byte(s.line)); got != s.fast {
			t.Errorf("%q: fast path taken %v, want %v", s.line, got, s.fast)
		}
	}
	for _, s := range rwShapes {
		b := []byte(s.line)
		for pos := 0; pos < len(b); pos++ {
			orig := b[pos]
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				checkRWFast(t, b)
			}
			b[pos] = orig
		}
	}
	rnd := rand.New(rand.NewSource(5))
	const alpha = "0123456789abcdefABCDEFx. -\n\x80\xff/:`@GRW"
	for iter := 0; iter < 300000; iter++ {
		b := []byte(rwShapes[rnd.Intn(len(rwShapes))].line)
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
		checkRWFast(t, b)
	}
}

// TestRWFastTakesKernelLines: every R/W line of the recorded e1000 logs
// and of the synthetic benchmark log takes the fast path (a shape it
// misses would still parse, only slower).
func TestRWFastTakesKernelLines(t *testing.T) {
	logs := [][]byte{[]byte(genLog(5000, 9))}
	for _, p := range []string{"testdata/e1000-bind.log", "../testdata/mmiotrace/e1000-probe.log"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, b)
	}
	for _, log := range logs {
		n := 0
		for _, l := range bytes.SplitAfter(log, []byte("\n")) {
			if len(l) > 2 && (l[0] == 'R' || l[0] == 'W') && l[1] == ' ' {
				n++
				if !checkRWFast(t, l) {
					t.Errorf("%q: not taken by the fast path", l)
				}
			}
		}
		if n == 0 {
			t.Fatal("no R/W lines")
		}
	}
}

// FuzzRWFast: the fast path agrees with the reference parser on any
// input it accepts.
func FuzzRWFast(f *testing.F) {
	for _, s := range rwShapes {
		f.Add([]byte(s.line))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		checkRWFast(t, b)
	})
}

// TestDec8 checks the word-at-a-time decimal conversion against the
// obvious loop for every length and random digits.
func TestDec8(t *testing.T) {
	rnd := rand.New(rand.NewSource(6))
	for iter := 0; iter < 100000; iter++ {
		n := rnd.Intn(9)
		var x, want uint64
		for k := 0; k < n; k++ {
			d := uint64(rnd.Intn(10))
			want = want*10 + d
			x |= ('0' + d) << (8 * (8 - n + k))
		}
		if got := dec8(x); got != want {
			t.Fatalf("%#x: got %d, want %d", x, got, want)
		}
	}
}

// FuzzReaderMatchesParseLine: the Reader (whose fast path takes the
// kernel's R/W lines in the buffer) gives, line for line, what ParseLine
// gives on each line alone: the same records, the same lines skipped with
// keep-going.
func FuzzReaderMatchesParseLine(f *testing.F) {
	f.Add([]byte(genLog(40, 8)))
	f.Add([]byte(sample))
	var long bytes.Buffer
	for _, s := range rwShapes {
		long.WriteString(s.line)
	}
	f.Add(long.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		if DetectCompression(data) != None {
			return
		}
		var want []string
		var bad int64
		lines := bytes.Split(data, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		for _, l := range lines {
			var r Record
			if err := ParseLine(l, &r); err != nil {
				bad++
				continue
			}
			want = append(want, r.Kind.String()+"|"+r.String()+"|"+string(r.Line))
		}
		rd := NewReader(bytes.NewReader(data))
		rd.SetKeepGoing(true)
		var got []string
		var rec Record
		for rd.ReadInto(&rec) == nil {
			got = append(got, rec.Kind.String()+"|"+rec.String()+"|"+string(rec.Line))
		}
		if rd.Skipped() != bad || len(got) != len(want) || rd.Line() != int64(len(lines)) {
			t.Fatalf("reader: %d records, %d skipped, %d lines; ParseLine: %d, %d, %d", len(got), rd.Skipped(), rd.Line(), len(want), bad, len(lines))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("record %d: reader %q, ParseLine %q", i, got[i], want[i])
			}
		}
	})
}

// TestNonDigitHexMask checks the word-at-a-time classifiers against a
// byte loop: the lowest marked byte is the first byte outside the class
// (none marked: all in it), for every byte value in every position of
// words of class bytes and for random words.
func TestNonDigitHexMask(t *testing.T) {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	isHex := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' }
	check := func(b []byte) {
		x := uint64(0)
		for k := 7; k >= 0; k-- {
			x = x<<8 | uint64(b[k])
		}
		for _, c := range []struct {
			name string
			mask func(uint64) uint64
			in   func(byte) bool
		}{{"digit", nonDigitMask, isDigit}, {"hex", nonHexMask, isHex}} {
			want := 8
			for k := 0; k < 8; k++ {
				if !c.in(b[k]) {
					want = k
					break
				}
			}
			if got := bits.TrailingZeros64(c.mask(x)) >> 3; got != want {
				t.Fatalf("%s mask of %q: first outside at %d, want %d", c.name, b, got, want)
			}
		}
	}
	rnd := rand.New(rand.NewSource(7))
	const class = "0123456789abcdef"
	for iter := 0; iter < 2000; iter++ {
		b := make([]byte, 8)
		for k := range b {
			b[k] = class[rnd.Intn(len(class))]
			if iter%2 == 0 {
				b[k] = class[rnd.Intn(10)]
			}
		}
		for pos := 0; pos < 8; pos++ {
			orig := b[pos]
			for v := 0; v < 256; v++ {
				b[pos] = byte(v)
				check(b)
			}
			b[pos] = orig
		}
		for k := range b {
			b[k] = byte(rnd.Intn(256))
		}
		check(b)
	}
}
