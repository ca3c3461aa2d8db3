package report

import (
	"math/rand"
	"sort"
	"testing"
)

// A Series of any length keeps at most MaxBins bins, and each bin holds
// exactly the samples of its time range (checked against a brute-force
// count over the kept samples).
func TestSeriesBoundedAndExact(t *testing.T) {
	for _, n := range []int{1, 10, 1000, 100000} {
		rng := rand.New(rand.NewSource(int64(n)))
		var s Series
		ts := make([]int64, n)
		t0 := int64(5_000_000_000)
		for i := range ts {
			ts[i] = t0 + rng.Int63n(int64(n)*1_000_000)
		}
		// Samples arrive in time order, as in a trace.
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		for _, x := range ts {
			s.Add(x, 2)
		}
		if len(s.Bins) > MaxBins {
			t.Errorf("n=%d: %d bins, want at most %d", n, len(s.Bins), MaxBins)
		}
		if s.StartNS != ts[0] {
			t.Errorf("n=%d: start %d, want the first sample %d", n, s.StartNS, ts[0])
		}
		for i, got := range s.Bins {
			lo, hi := s.StartNS+int64(i)*s.BinNS, s.StartNS+int64(i+1)*s.BinNS
			want := 0.0
			for _, x := range ts {
				if x >= lo && x < hi {
					want += 2
				}
			}
			if got != want {
				t.Fatalf("n=%d: bin %d [%d,%d) = %v, want %v", n, i, lo, hi, got, want)
			}
		}
	}
}

func TestValueSeriesKeepsLastValue(t *testing.T) {
	var s ValueSeries
	for i := int64(0); i < 1000; i++ {
		s.Add(i*MinBinNS, uint64(i))
	}
	if len(s.Values) > MaxBins {
		t.Fatalf("%d bins", len(s.Values))
	}
	for i, v := range s.Values {
		// The last sample of bin i is at the bin's end minus one step.
		last := (int64(i+1)*s.BinNS)/MinBinNS - 1
		if last > 999 {
			last = 999
		}
		if !s.Has[i] || v != uint64(last) {
			t.Errorf("bin %d: %d (has %v), want %d", i, v, s.Has[i], last)
		}
	}
}

func TestLogHistBins(t *testing.T) {
	for _, tc := range []struct {
		v   int64
		bin int
	}{
		{0, 0}, {1, 0}, {2, 1}, {9, 4}, {10, 5}, {99, 9}, {100, 10}, {101, 10}, {1000, 15}, {1584, 15}, {1585, 16},
	} {
		var h LogHist
		h.Add(tc.v)
		if len(h.Counts) != tc.bin+1 || h.Counts[tc.bin] != 1 {
			t.Errorf("%d: counts %v, want bin %d", tc.v, h.Counts, tc.bin)
		}
		if lo, hi := LogBinLow(tc.bin), LogBinLow(tc.bin+1); float64(tc.v) < lo || float64(tc.v) >= hi {
			t.Errorf("%d in bin %d [%v,%v)", tc.v, tc.bin, lo, hi)
		}
	}
}
