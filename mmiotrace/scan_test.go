package mmiotrace

import (
	"math/rand"
	"testing"
)

// TestScanRWMatchesParse: the filter's validate-only scan of R/W lines
// accepts exactly the lines the full parse accepts, ends at the same
// place and converts width, map id and address alike; checked for every
// byte value in every position of kernel-shaped lines, and for random
// multi-byte mutations.
func TestScanRWMatchesParse(t *testing.T) {
	lines := []string{
		"R 4 8.288891 1 0xfebc0008 0x80080783 0x0 0\n",
		"W 4 2.000132 1 0xfebc5404 0xae10a901 0xffffffff819044bf 0\n",
		"R 8 12.123456 -1 0xfebc0000fe 0xdeadbeefdeadbeef 0xffffffff8190ae24 12345\n",
		"W 1 1.5 2 0xfebc0001 0x5 0xffffffff81024d75 0\n",
		"R 2 100.000000000 1 0xABCDEF01 0xAbCd 0xFFFFFFFF8190AE24 0\n",
	}
	check := func(b []byte) {
		var r1, r2 Record
		end1, bad := parseRWFields(b, &r1)
		end2, ok := scanRWFields(b, &r2)
		if ok != (bad == "") || ok && (end1 != end2 || r1.Width != r2.Width || r1.MapID != r2.MapID || r1.Phys != r2.Phys) {
			t.Fatalf("%q: parse end %d bad %q %+v; scan end %d ok %v %+v", b, end1, bad, r1, end2, ok, r2)
		}
	}
	for _, l := range lines {
		b := []byte(l)
		check(b)
		for pos := 2; pos < len(b); pos++ {
			orig := b[pos]
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				check(b)
			}
			b[pos] = orig
		}
	}
	rnd := rand.New(rand.NewSource(4))
	const alpha = "0123456789abcdefABCDEFx. -\n\x80\xff"
	for iter := 0; iter < 200000; iter++ {
		b := []byte(lines[rnd.Intn(len(lines))])
		for k := rnd.Intn(4); k >= 0; k-- {
			b[2+rnd.Intn(len(b)-2)] = alpha[rnd.Intn(len(alpha))]
		}
		check(b)
	}
}
