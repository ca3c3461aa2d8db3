package usb

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// ev builds a wall-clock event: typ S/C/E, id, bus/dev/ep, in, status,
// timestamp in microseconds.
func ev(typ usbmon.EventType, id uint64, dev, ep uint8, in bool, st int32, us int64) *usbmon.Event {
	return &usbmon.Event{ID: id, Type: typ, Transfer: usbmon.Bulk, Bus: 1, Device: dev, Endpoint: ep, In: in,
		Status: st, Sec: us / 1000000, Usec: int32(us % 1000000), Fields: usbmon.HasWallClock | usbmon.HasBus}
}

func TestPairerReusedIDs(t *testing.T) {
	const A, B = 0xffff8800aa00, 0xffff8800bb00
	S, C, E := usbmon.Submission, usbmon.Callback, usbmon.SubmitError
	stream := []*usbmon.Event{
		ev(S, A, 2, 1, true, -115, 100),  // 0
		ev(S, B, 2, 1, true, -115, 110),  // 1
		ev(C, A, 2, 1, true, 0, 150),     // 2 pairs with 0
		ev(S, A, 2, 1, true, -115, 160),  // 3 id A reused at once
		ev(C, B, 2, 1, true, 0, 170),     // 4 pairs with 1
		ev(S, A, 3, 2, false, -115, 175), // 5 same id, other device: distinct URB
		ev(C, A, 2, 1, true, -32, 200),   // 6 pairs with 3 (stall)
		ev(C, A, 3, 2, false, 0, 205),    // 7 pairs with 5
		ev(C, A, 2, 1, true, 0, 210),     // 8 orphan: A on dev 2 is not pending
		ev(S, B, 2, 1, true, -115, 300),  // 9 superseded by 10 (its completion was lost)
		ev(S, B, 2, 1, true, -115, 310),  // 10
		ev(C, B, 2, 1, true, 0, 330),     // 11 pairs with 10
		ev(E, A, 2, 1, true, -19, 400),   // 12 submission error
		ev(S, B, 2, 1, true, -115, 500),  // 13 in flight at the end
	}
	want := map[int]struct {
		sub int
		lat int64
	}{2: {0, 50}, 4: {1, 60}, 6: {3, 40}, 7: {5, 30}, 11: {10, 20}}
	p := NewPairer()
	var superseded []uint64
	p.OnSuperseded = func(k Key, s Submission) { superseded = append(superseded, s.Seq) }
	for i, e := range stream {
		pr, ok := p.Add(e)
		w, expect := want[i]
		if ok != expect {
			t.Errorf("event %d: paired=%v, want %v", i, ok, expect)
			continue
		}
		if ok && (int(pr.Submit.Seq) != w.sub || pr.Latency != w.lat || pr.Seq != uint64(i)) {
			t.Errorf("event %d: paired with %d latency %d, want %d latency %d", i, pr.Submit.Seq, pr.Latency, w.sub, w.lat)
		}
	}
	c := p.Counts()
	wantC := PairCounts{Pairs: 5, Unmatched: 2, Superseded: 1, InFlight: 1, Orphans: 1, SubmitErrors: 1}
	if c != wantC {
		t.Errorf("counts %+v, want %+v", c, wantC)
	}
	if len(superseded) != 1 || superseded[0] != 9 {
		t.Errorf("superseded %v, want [9]", superseded)
	}
	if f := p.InFlight(); len(f) != 1 || f[0].Seq != 13 || f[0].ID != B || f[0].Micros != 500 {
		t.Errorf("in flight %+v", f)
	}
}

func TestPairerBounded(t *testing.T) {
	p := &Pairer{MaxPending: 4}
	for i := 0; i < 10; i++ {
		p.Add(ev(usbmon.Submission, uint64(i), 1, 1, true, -115, int64(i)))
	}
	if c := p.Counts(); c.InFlight != 4 || c.Overflow != 6 {
		t.Errorf("%+v", c)
	}
}

func TestPairerTextWrap(t *testing.T) {
	// The text stamp wraps at 4096 s.
	s := &usbmon.Event{ID: 1, Type: usbmon.Submission, TextStamp: 4095999990, Fields: usbmon.HasTextStamp}
	c := &usbmon.Event{ID: 1, Type: usbmon.Callback, TextStamp: 15, Fields: usbmon.HasTextStamp}
	p := NewPairer()
	p.Add(s)
	pr, ok := p.Add(c)
	if !ok || pr.Latency != 25 {
		t.Errorf("latency across the wrap %d %v", pr.Latency, ok)
	}
}

func TestPairAndStatsNoAlloc(t *testing.T) {
	st := NewStats()
	evs := make([]*usbmon.Event, 0, 64)
	for i := 0; i < 32; i++ {
		evs = append(evs, ev(usbmon.Submission, uint64(0x1000+i%4), 5, 2, true, -115, int64(i*10)),
			ev(usbmon.Callback, uint64(0x1000+i%4), 5, 2, true, 0, int64(i*10+5)))
	}
	for _, e := range evs { // warm up: endpoint and status maps
		st.Add(e)
	}
	n := testing.AllocsPerRun(100, func() {
		for _, e := range evs {
			st.Add(e)
		}
	})
	if n != 0 {
		t.Errorf("pair+stats allocates %v times per %d events", n, len(evs))
	}
}

func TestHistogramQuantiles(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var h Histogram
	var vals []int64
	for i := 0; i < 20000; i++ {
		v := int64(r.ExpFloat64() * 2000)
		if i%100 == 0 {
			v = int64(r.Intn(50)) // exact region
		}
		vals = append(vals, v)
		h.Add(v)
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	if h.Min() != vals[0] || h.Max() != vals[len(vals)-1] || h.Count() != uint64(len(vals)) {
		t.Errorf("min/max/count %d %d %d", h.Min(), h.Max(), h.Count())
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(q*float64(len(vals))+0.999999999)-1]
		got := h.Quantile(q)
		tol := float64(exact)/32 + 1
		if d := float64(got - exact); d > tol || -d > tol {
			t.Errorf("q%.3f: %d, exact %d (tolerance %.1f)", q, got, exact, tol)
		}
	}
	var small Histogram
	for _, v := range []int64{5, 1, 9, 3} {
		small.Add(v)
	}
	if small.Quantile(0.5) != 3 || small.Quantile(1) != 9 || small.Quantile(0) != 1 {
		t.Errorf("small quantiles %d %d %d", small.Quantile(0.5), small.Quantile(1), small.Quantile(0))
	}
	for v := int64(0); v < 1<<20; v = v*3/2 + 1 {
		if i := histIndex(v); histLow(i) > v || histLow(i+1) <= v {
			t.Fatalf("bucket %d [%d,%d) misses %d", i, histLow(i), histLow(i+1), v)
		}
	}
}

func TestStatsCounts(t *testing.T) {
	S, C, E := usbmon.Submission, usbmon.Callback, usbmon.SubmitError
	st := NewStats()
	for _, e := range []*usbmon.Event{
		ev(S, 1, 4, 1, true, -115, 0), ev(C, 1, 4, 1, true, -32, 100),
		ev(S, 1, 4, 1, true, -115, 200), ev(C, 1, 4, 1, true, -71, 300),
		ev(S, 1, 4, 1, true, -115, 400), ev(C, 1, 4, 1, true, -2, 500),
		ev(S, 1, 4, 1, true, -115, 600), ev(C, 1, 4, 1, true, 0, 1000600),
		ev(E, 2, 4, 1, true, -19, 1000700),
	} {
		if e.Type == C && e.Status == 0 {
			e.Length = 4096
		}
		st.Add(e)
	}
	eps := st.Endpoints()
	if len(eps) != 1 {
		t.Fatalf("%d endpoints", len(eps))
	}
	s := eps[0]
	if s.Submissions != 4 || s.Completions != 4 || s.Stalls != 1 || s.Errors != 1 || s.Cancelled != 1 || s.SubmitErrors != 1 || s.Bytes != 4096 {
		t.Errorf("%+v", s)
	}
	if s.Latency.Count() != 4 || s.Latency.Min() != 100 || s.Latency.Max() != 1000000 {
		t.Errorf("latency %d %d %d", s.Latency.Count(), s.Latency.Min(), s.Latency.Max())
	}
	if r := s.BytesPerSecond(); r < 4090 || r > 4100 { // 4096 bytes over 1.0007 s
		t.Errorf("rate %f", r)
	}
	if s.Status[-32] != 1 || s.Status[-19] != 1 || s.StatusCounts()[0] != 1 || s.OK != 1 {
		t.Errorf("status %v", s.Status)
	}
	d := st.Devices()
	if len(d) != 1 || d[0].Stalls != 1 || d[0].Latency.Count() != 4 {
		t.Errorf("devices %+v", d)
	}
}

func TestStatsBounded(t *testing.T) {
	st := NewStats()
	st.MaxEndpoints = 3
	for dev := uint8(1); dev <= 5; dev++ {
		st.Add(ev(usbmon.Submission, 1, dev, 1, true, -115, 0))
	}
	if len(st.Endpoints()) != 3 || st.Untracked() != 2 || st.Events() != 5 {
		t.Errorf("%d endpoints, %d untracked", len(st.Endpoints()), st.Untracked())
	}
}

// TestStatsManyEndpoints checks Stats' per-endpoint accounting, with its
// cache of recent endpoints, against counts kept in a plain map: random
// events over 200 endpoints, among them groups that differ in one field
// of the key only (bus above 255, device, endpoint number, direction,
// transfer type), so that a cache keyed on less than the whole key, or
// one that hands out the wrong endpoint on a collision, merges two of
// them and fails.
func TestStatsManyEndpoints(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	type want struct{ sub, comp, bytes uint64 }
	var keys []EndpointKey
	for _, bus := range []uint16{1, 257} {
		for _, dev := range []uint8{2, 3} {
			for _, ep := range []uint8{1, 0x81, 2} {
				for _, tr := range []usbmon.TransferType{usbmon.Bulk, usbmon.Interrupt} {
					keys = append(keys, EndpointKey{Bus: bus, Device: dev, Endpoint: ep, Transfer: tr})
				}
			}
		}
	}
	for len(keys) < 200 {
		keys = append(keys, EndpointKey{Bus: uint16(rng.Intn(1 << 16)), Device: uint8(rng.Intn(128)),
			Endpoint: uint8(rng.Intn(16)) | uint8(rng.Intn(2))<<7, Transfer: usbmon.TransferType(rng.Intn(4))})
	}
	ref := map[EndpointKey]*want{}
	st := NewStats()
	for i := 0; i < 20000; i++ {
		k := keys[rng.Intn(len(keys))]
		if i%3 == 0 { // runs of one endpoint, as in captures
			k = keys[i%7]
		}
		e := &usbmon.Event{ID: uint64(i), Bus: k.Bus, Device: k.Device, Endpoint: k.Endpoint & 0x7f,
			In: k.Endpoint&0x80 != 0, Transfer: k.Transfer, Fields: usbmon.HasWallClock | usbmon.HasBus,
			Sec: int64(i), Length: uint32(rng.Intn(4096))}
		w := ref[k]
		if w == nil {
			w = &want{}
			ref[k] = w
		}
		if rng.Intn(2) == 0 {
			e.Type = usbmon.Submission
			w.sub++
		} else {
			e.Type = usbmon.Callback
			w.comp++
			w.bytes += uint64(e.Length)
		}
		st.Add(e)
	}
	eps := st.Endpoints()
	if len(eps) != len(ref) {
		t.Fatalf("%d endpoints, want %d", len(eps), len(ref))
	}
	for _, s := range eps {
		w := ref[s.EndpointKey]
		if w == nil || s.Submissions != w.sub || s.Completions != w.comp || s.Bytes != w.bytes {
			t.Errorf("%+v: %d submissions, %d completions, %d bytes; want %+v", s.EndpointKey, s.Submissions, s.Completions, s.Bytes, w)
		}
	}
}
