package ndjson

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"
)

func checkNumbers(t *testing.T, u uint64, data []byte) {
	t.Helper()
	pre := []byte("x")
	if got, want := string(AppendUint(pre, u)), string(strconv.AppendUint(pre, u, 10)); got != want {
		t.Fatalf("AppendUint(%d) = %q, strconv %q", u, got, want)
	}
	if got, want := string(AppendInt(pre, int64(u))), string(strconv.AppendInt(pre, int64(u), 10)); got != want {
		t.Fatalf("AppendInt(%d) = %q, strconv %q", int64(u), got, want)
	}
	if got, want := string(AppendInt1000(pre, int64(u))), string(strconv.AppendInt(pre, int64(u)*1000, 10)); got != want {
		t.Fatalf("AppendInt1000(%d) = %q, strconv of v*1000 %q", int64(u), got, want)
	}
	if got, want := string(AppendInt1000(pre, -int64(u))), string(strconv.AppendInt(pre, -int64(u)*1000, 10)); got != want {
		t.Fatalf("AppendInt1000(%d) = %q, strconv of v*1000 %q", -int64(u), got, want)
	}
	if got, want := string(AppendHexUint64(pre, u)), string(strconv.AppendUint(pre, u, 16)); got != want {
		t.Fatalf("AppendHexUint64(%#x) = %q, strconv %q", u, got, want)
	}
	if got, want := string(AppendHex(pre, data)), string(hex.AppendEncode(pre, data)); got != want {
		t.Fatalf("AppendHex(% x) = %q, encoding/hex %q", data, got, want)
	}
	// PutUint writes in place after a prefix, and leaves what precedes.
	var w [40]byte
	w[0] = 'x'
	if n := PutUint(w[:], 1, u); string(w[:n]) != string(strconv.AppendUint(pre, u, 10)) {
		t.Fatalf("PutUint(%d) = %q, strconv %q", u, w[:n], strconv.AppendUint(pre, u, 10))
	}
	var b8 [8]byte
	binary.BigEndian.PutUint64(b8[:], u)
	hi, lo := HexWords(u)
	var h16 [16]byte
	binary.BigEndian.PutUint64(h16[:], hi)
	binary.BigEndian.PutUint64(h16[8:], lo)
	if got, want := string(h16[:]), hex.EncodeToString(b8[:]); got != want {
		t.Fatalf("HexWords(%#x) = %q, encoding/hex %q", u, got, want)
	}
	if len(data) >= 16 {
		var h32 [32]byte
		PutHex16(&h32, (*[16]byte)(data))
		if got, want := string(h32[:]), hex.EncodeToString(data[:16]); got != want {
			t.Fatalf("PutHex16(% x) = %q, encoding/hex %q", data[:16], got, want)
		}
	}
	if u < 100 {
		var p [2]byte
		binary.LittleEndian.PutUint16(p[:], DigitPair(uint32(u)))
		if got, want := string(p[:]), fmt.Sprintf("%02d", u); got != want {
			t.Fatalf("DigitPair(%d) = %q, want %q", u, got, want)
		}
	}
}

// TestAppendNumbersMatchStrconv compares the appenders and the in-place
// writers (PutUint, HexWords, PutHex16, DigitPair) with strconv,
// encoding/hex and fmt: every value below 100,000, every power of two and ten with
// its neighbours, the extremes, random values, and hex of every byte value
// at every length and alignment up to 100 bytes (several
// 16-byte blocks of the SSE2 path and every tail).
func TestAppendNumbersMatchStrconv(t *testing.T) {
	for u := uint64(0); u < 100000; u++ {
		checkNumbers(t, u, nil)
	}
	for s := 0; s < 64; s++ {
		for _, d := range []uint64{0, 1, math.MaxUint64} {
			checkNumbers(t, uint64(1)<<s+d, nil)
		}
	}
	for p := uint64(1); p < math.MaxUint64/10; p *= 10 {
		checkNumbers(t, p-1, nil)
		checkNumbers(t, p, nil)
	}
	for _, u := range []uint64{math.MaxUint64, math.MaxInt64, 1 << 63, uint64(math.MaxInt64) + 2,
		math.MaxInt64 / 1000, math.MaxInt64/1000 + 1, math.MaxInt64/1000 - 1, -(math.MinInt64 / 1000), -(math.MinInt64 / 1000) + 1} {
		checkNumbers(t, u, nil)
	}
	rng := rand.New(rand.NewSource(1))
	all := make([]byte, 256+100)
	for i := range all {
		all[i] = byte(i)
	}
	for i := 0; i < 100000; i++ {
		checkNumbers(t, rng.Uint64()>>uint(rng.Intn(64)), nil)
	}
	for off := 0; off < 256; off++ {
		for n := 0; n <= 100; n++ {
			checkNumbers(t, 0, all[off:off+n])
		}
	}
}

func FuzzAppendNumbers(f *testing.F) {
	f.Add(uint64(0), []byte{})
	f.Add(uint64(1750417444534982000), []byte{0x0c, 0xa7, 0x04, 0x00, 0xff, 0x9a, 0x10, 0x01, 0xab})
	f.Add(uint64(math.MaxUint64), []byte("0123456789abcdefghij"))
	f.Fuzz(func(t *testing.T, u uint64, data []byte) {
		checkNumbers(t, u, data)
	})
}

// TestSecondsMatchesAppend checks Seconds.AppendInt1000 against strconv
// of v*1000: sequences of stamps that stay in one second, cross seconds,
// go back, and the bounds where it hands over to AppendInt1000.
func TestSecondsMatchesAppend(t *testing.T) {
	var vals []int64
	for _, base := range []int64{0, 999000, 1000000, 1750417432438355, 9999999, 10000000, 999999999999, 1e12, math.MaxInt64/1000 - 3} {
		for d := int64(-3); d <= 3; d++ {
			vals = append(vals, base+d, base+d*999999, base-d*1000001)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		switch i % 4 {
		case 0:
			vals = append(vals, rng.Int63n(2e12)-1e12)
		case 1:
			vals = append(vals, vals[len(vals)-1]+rng.Int63n(3000))
		case 2:
			vals = append(vals, rng.Int63())
		default:
			vals = append(vals, -rng.Int63())
		}
	}
	vals = append(vals, math.MinInt64, math.MaxInt64, math.MaxInt64/1000, math.MaxInt64/1000+1, math.MinInt64/1000)
	var c Seconds
	for _, v := range vals {
		if got, want := string(c.AppendInt1000([]byte("x"), v)), "x"+strconv.FormatInt(v*1000, 10); got != want {
			t.Fatalf("AppendInt1000(%d) = %q, want %q", v, got, want)
		}
	}
}
