package usb

import "math/bits"

// Histogram is a log-linear histogram of non-negative int64 values
// (latencies in microseconds). Values below 64 are counted exactly; larger
// values fall in buckets 1/32 of a power of two wide, so a quantile is off
// by at most 1/32 (3.2%) of its value. Min, max, count and sum are exact.
// It uses a fixed 15 KiB whatever the number of values.
type Histogram struct {
	counts   [histBuckets]uint64
	n        uint64
	sum      int64
	min, max int64
}

const (
	histSub     = 32                     // sub-buckets per power of two
	histBuckets = 2*histSub + 58*histSub // exact 0..63, then exponents 1..58
)

func histIndex(v int64) int {
	if v < 2*histSub {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 6 // v>>e is in [32, 64)
	return 2*histSub + (e-1)*histSub + int(v>>uint(e)) - histSub
}

// histLow returns the smallest value of bucket i.
func histLow(i int) int64 {
	if i < 2*histSub {
		return int64(i)
	}
	i -= 2 * histSub
	e := i/histSub + 1
	return int64(histSub+i%histSub) << uint(e)
}

// Add records v (negative values count as 0).
func (h *Histogram) Add(v int64) {
	if v < 0 {
		v = 0
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += v
	i := histIndex(v)
	if i >= histBuckets {
		i = histBuckets - 1
	}
	h.counts[i]++
}

// Count returns the number of values.
func (h *Histogram) Count() uint64 { return h.n }

// Min returns the smallest value (0 when empty).
func (h *Histogram) Min() int64 { return h.min }

// Max returns the largest value.
func (h *Histogram) Max() int64 { return h.max }

// Mean returns the arithmetic mean.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.n)
}

// Quantile returns the value at quantile q (0..1), by the nearest-rank
// definition: the smallest recorded value with at least q*n values at or
// below it, within the bucket resolution, clamped to [Min, Max].
func (h *Histogram) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999999)
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := histLow(i)
			if i >= 2*histSub { // report the middle of a wide bucket
				v += (histLow(i+1) - v) / 2
			}
			return max(h.min, min(v, h.max))
		}
	}
	return h.max
}

// Merge adds the values of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
	for i, c := range o.counts {
		h.counts[i] += c
	}
}
