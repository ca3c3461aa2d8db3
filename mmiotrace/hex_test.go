package mmiotrace

import (
	"math/rand"
	"strconv"
	"testing"
)

// TestHexAtMatchesStrconv checks the SWAR hex parser against strconv on
// random digits of every length, in both cases, followed by every kind of
// byte.
func TestHexAtMatchesStrconv(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	const digits = "0123456789abcdefABCDEF"
	for iter := 0; iter < 200000; iter++ {
		n := rnd.Intn(20)
		b := make([]byte, 0, 40)
		for k := 0; k < n; k++ {
			b = append(b, digits[rnd.Intn(len(digits))])
		}
		b = append(b, byte(rnd.Intn(256)))
		for k := rnd.Intn(10); k > 0; k-- {
			b = append(b, byte(rnd.Intn(256)))
		}
		v, j, ok := hexAt(b, 0)
		// Reference: count leading hex digits, parse with strconv.
		m := 0
		for m < len(b) && hexVal[b[m]] != 0xff {
			m++
		}
		want, err := strconv.ParseUint(string(b[:m]), 16, 64)
		wantOK := m > 0 && m <= 16 && err == nil
		if ok != wantOK || (ok && (v != want || j != m)) {
			t.Fatalf("%q: got %x %d %v, want %x %d %v", b, v, j, ok, want, m, wantOK)
		}
	}
}
