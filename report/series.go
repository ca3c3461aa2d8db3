package report

// MaxBins bounds the bins of a Series: a series of a trace of any length
// holds at most this many numbers.
const MaxBins = 200

// Series counts (sums) values in equal time bins. It starts with
// MinBinNS-wide bins at its first sample and doubles the bin width (adding
// pairs of bins) whenever a sample falls past the last bin, so its size is
// bounded by MaxBins whatever the length of the trace.
type Series struct {
	// StartNS is the time of the first bin's start (nanoseconds on the
	// trace's clock; see Trace.OffsetNS for the report's axis).
	StartNS int64 `json:"start_ns"`
	// BinNS is the width of a bin.
	BinNS int64 `json:"bin_ns"`
	// Bins holds the sum of the values of each bin.
	Bins []float64 `json:"bins"`
}

// MinBinNS is the narrowest bin of a Series: 1 µs.
const MinBinNS = 1000

// Add adds v at time t (nanoseconds). Samples before the first one are
// counted in the first bin.
func (s *Series) Add(t int64, v float64) {
	i := s.index(t)
	s.Bins[i] += v
}

func (s *Series) index(t int64) int {
	if s.BinNS == 0 {
		s.StartNS, s.BinNS = t, MinBinNS
	}
	d := t - s.StartNS
	if d < 0 {
		d = 0
	}
	for d/s.BinNS >= MaxBins {
		s.widen()
	}
	i := int(d / s.BinNS)
	for len(s.Bins) <= i {
		s.Bins = append(s.Bins, 0)
	}
	return i
}

func (s *Series) widen() {
	n := (len(s.Bins) + 1) / 2
	for i := 0; i < n; i++ {
		v := s.Bins[2*i]
		if 2*i+1 < len(s.Bins) {
			v += s.Bins[2*i+1]
		}
		s.Bins[i] = v
	}
	s.Bins = s.Bins[:n]
	s.BinNS *= 2
}

// Total is the sum of all bins.
func (s *Series) Total() float64 {
	t := 0.0
	for _, v := range s.Bins {
		t += v
	}
	return t
}

// ValueSeries keeps the last value seen in each time bin (register values
// over time), with the same bounded binning as Series.
type ValueSeries struct {
	StartNS int64 `json:"start_ns"`
	BinNS   int64 `json:"bin_ns"`
	// Values holds the last value of each bin; Has says whether the bin
	// has one.
	Values []uint64 `json:"values"`
	Has    []bool   `json:"has"`
}

// Add records value v at time t.
func (s *ValueSeries) Add(t int64, v uint64) {
	if s.BinNS == 0 {
		s.StartNS, s.BinNS = t, MinBinNS
	}
	d := t - s.StartNS
	if d < 0 {
		d = 0
	}
	for d/s.BinNS >= MaxBins {
		n := (len(s.Values) + 1) / 2
		for i := 0; i < n; i++ {
			v, h := s.Values[2*i], s.Has[2*i]
			if 2*i+1 < len(s.Values) && s.Has[2*i+1] {
				v, h = s.Values[2*i+1], true
			}
			s.Values[i], s.Has[i] = v, h
		}
		s.Values, s.Has = s.Values[:n], s.Has[:n]
		s.BinNS *= 2
	}
	i := int(d / s.BinNS)
	for len(s.Values) <= i {
		s.Values = append(s.Values, 0)
		s.Has = append(s.Has, false)
	}
	s.Values[i], s.Has[i] = v, true
}
