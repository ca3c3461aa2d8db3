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

// TestHex8AtMatchesStrconv checks the eight-digit word path against
// strconv: every byte value in every position among random digits of
// both cases, and random words.
func TestHex8AtMatchesStrconv(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	const digits = "0123456789abcdefABCDEF"
	check := func(b []byte) {
		v, ok := hex8At(b)
		want, err := strconv.ParseUint(string(b), 16, 64)
		if ok != (err == nil) || ok && v != want {
			t.Fatalf("%q: got %x %v, want %x %v", b, v, ok, want, err)
		}
	}
	b := make([]byte, 8)
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for k := range b {
				b[k] = digits[rnd.Intn(len(digits))]
			}
			b[pos] = byte(c)
			check(b)
		}
	}
	for iter := 0; iter < 100000; iter++ {
		for k := range b {
			if rnd.Intn(4) == 0 {
				b[k] = byte(rnd.Intn(256))
			} else {
				b[k] = digits[rnd.Intn(16)]
			}
		}
		check(b)
	}
}

// TestHex0xAtMatchesStrconv checks "0x" fields (the 1-, 8- and 16-digit
// word paths included) and the validate-only hex0xSkip against strconv.
func TestHex0xAtMatchesStrconv(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	const digits = "0123456789abcdefABCDEF"
	for iter := 0; iter < 200000; iter++ {
		n := rnd.Intn(19)
		b := []byte("0x")
		for k := 0; k < n; k++ {
			if rnd.Intn(40) == 0 {
				b = append(b, byte(rnd.Intn(256)))
			} else {
				b = append(b, digits[rnd.Intn(len(digits))])
			}
		}
		b = append(b, " 0xffffffff81000000 0\n"[:1+rnd.Intn(22)]...)
		v, j, ok := hex0xAt(b, 0)
		m := 2
		for m < len(b) && hexVal[b[m]] != 0xff {
			m++
		}
		want, err := strconv.ParseUint(string(b[2:m]), 16, 64)
		wantOK := m > 2 && m <= 18 && err == nil
		if ok != wantOK || ok && (v != want || j != m) {
			t.Fatalf("%q: got %x %d %v, want %x %d %v", b, v, j, ok, want, m, wantOK)
		}
		if j2, ok2 := hex0xSkip(b, 0); ok2 != ok || ok && j2 != j {
			t.Fatalf("%q: skip %d %v, parse %d %v", b, j2, ok2, j, ok)
		}
	}
}
