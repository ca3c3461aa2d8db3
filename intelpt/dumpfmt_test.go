package intelpt

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestDumpHex checks the dump's word-at-a-time hex writers against
// strconv, on values of every digit count, appended to buffers with and
// without room to spare (the writers store past what they keep).
func TestDumpHex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		v := r.Uint64() >> uint(r.IntN(65))
		if i < 64 {
			v = 1 << uint(i)
		}
		prefix := []byte("x: ")
		if i%2 == 0 {
			prefix = append(make([]byte, 0, 3), prefix...) // no spare capacity
		}
		want := strconv.FormatUint(v, 16)
		if got := string(hexVar(prefix, v)); got != "x: "+want {
			t.Fatalf("hexVar(%#x) = %q, want %q", v, got, "x: "+want)
		}
		n := r.IntN(17)
		wantN := want
		if len(wantN) < n {
			wantN = strings.Repeat("0", n-len(wantN)) + wantN
		}
		if got := string(hexN(prefix, v, n)); got != "x: "+wantN {
			t.Fatalf("hexN(%#x, %d) = %q, want %q", v, n, got, "x: "+wantN)
		}
		if v < 1<<32 && n <= 8 {
			b := append(make([]byte, 0, 3+16), prefix...) // hex8 needs 8 bytes of room
			if got := string(hex8(b, uint32(v), n)); got != "x: "+wantN {
				t.Fatalf("hex8(%#x, %d) = %q, want %q", v, n, got, "x: "+wantN)
			}
		}
		want16 := strings.Repeat("0", 16-len(want)) + want
		if got := string(hex16(prefix, v)); got != "x: "+want16 {
			t.Fatalf("hex16(%#x) = %q, want %q", v, got, "x: "+want16)
		}
	}
}

// TestDumpTNT checks the TNT writer against the bits of the payload
// spelled out one by one (strconv's base 2), for 0 to 64 bits.
func TestDumpTNT(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 5000; i++ {
		n := uint8(i % 65)
		v := r.Uint64()
		if n < 64 {
			v &= 1<<n - 1
		}
		want := ""
		if n > 0 {
			s := strconv.FormatUint(v, 2)
			want = strings.Repeat("0", int(n)-len(s)) + s
			want = strings.NewReplacer("1", "!", "0", ".").Replace(want)
		}
		if got := string(appendTNT([]byte("tnt "), v, n)); got != "tnt "+want {
			t.Fatalf("appendTNT(%#x, %d) = %q, want %q", v, n, got, "tnt "+want)
		}
	}
}
