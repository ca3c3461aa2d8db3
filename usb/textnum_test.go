package usb

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
	"time"
)

// TestAppendSecondsMatchesStrconv compares the relative time column with
// strconv.AppendFloat(rel, 'f', 6): every microsecond of the first two
// seconds and around 4096 s, negative times, random ones up to 10^7 s
// (beyond the fast path), and values that are not whole microseconds.
func TestAppendSecondsMatchesStrconv(t *testing.T) {
	check := func(rel float64) {
		t.Helper()
		got, want := string(appendSeconds6([]byte("x"), rel)), string(strconv.AppendFloat([]byte("x"), rel, 'f', 6, 64))
		if got != want {
			t.Fatalf("%v: %q, strconv %q", rel, got, want)
		}
	}
	for us := int64(-2000000); us <= 2000000; us++ {
		check(float64(us) / 1e6)
	}
	for us := int64(4095e6); us <= 4097e6; us += 7 {
		check(float64(us) / 1e6)
	}
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 200000; i++ {
		check(float64(rng.Int63n(2e13)-1e13) / 1e6)
		check(rng.Float64() * 2e6)
	}
	for _, v := range []float64{0, math.Copysign(0, -1), 999999.9999995, -999999.999999, 1e6, 5e-7, 4.9999999e-7, math.Inf(1), math.NaN()} {
		check(v)
	}
}

// TestAppendSecondsMicrosMatchesStrconv compares the time column written
// from microseconds (usb read) with strconv.AppendFloat(us/1e6, 'f', 6):
// every microsecond of the first two seconds, around 4096 s and around
// 10^6 s (where it hands over to the float path), and random ones up to
// 10^7 s either side.
func TestAppendSecondsMicrosMatchesStrconv(t *testing.T) {
	check := func(us int64) {
		t.Helper()
		got, want := string(appendSecondsMicros([]byte("x"), us)), string(strconv.AppendFloat([]byte("x"), float64(us)/1e6, 'f', 6, 64))
		if got != want {
			t.Fatalf("%d µs: %q, strconv %q", us, got, want)
		}
	}
	for us := int64(-2000000); us <= 2000000; us++ {
		check(us)
	}
	for _, c := range []int64{4096e6, 1e12, -1e12} {
		for us := c - 3000; us <= c+3000; us++ {
			check(us)
		}
	}
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 200000; i++ {
		check(rng.Int63n(2e13) - 1e13)
	}
	for _, us := range []int64{math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		check(us)
	}
}

// TestAppendMicrosMatchesDuration compares the latency column with
// time.Duration.String for every latency up to 2 s and random ones.
func TestAppendMicrosMatchesDuration(t *testing.T) {
	check := func(us int64) {
		t.Helper()
		got, want := string(appendMicros([]byte("x"), us)), "x"+time.Duration(us*1000).String()
		if got != want {
			t.Fatalf("%d µs: %q, time.Duration %q", us, got, want)
		}
	}
	for us := int64(-1000); us <= 2000000; us++ {
		check(us)
	}
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 100000; i++ {
		check(rng.Int63n(1e12))
	}
}
