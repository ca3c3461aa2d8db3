package usb

import (
	"sort"

	"github.com/iotap/iotap/usbmon"
)

// EndpointKey identifies an endpoint of a device on a bus.
type EndpointKey struct {
	Bus      uint16              `json:"bus"`
	Device   uint8               `json:"device"`
	Endpoint uint8               `json:"endpoint"` // address: number | 0x80 for IN
	Transfer usbmon.TransferType `json:"-"`
}

// EndpointStats accumulates what happened on one endpoint.
type EndpointStats struct {
	EndpointKey
	Submissions  uint64 `json:"submissions"`
	Completions  uint64 `json:"completions"`
	SubmitErrors uint64 `json:"submit_errors"`
	// Errors counts completions with a negative status that is neither a
	// stall nor a cancellation (see IsCancel).
	Errors    uint64 `json:"errors"`
	Stalls    uint64 `json:"stalls"`
	Cancelled uint64 `json:"cancelled"`
	// Bytes is the sum of the actual lengths of successful completions.
	Bytes uint64 `json:"bytes"`
	// FirstMicros and LastMicros bound the endpoint's activity.
	FirstMicros int64 `json:"-"`
	LastMicros  int64 `json:"-"`
	// Status counts completions and submission errors per status value
	// (see StatusCounts; successful completions are in OK).
	Status map[int32]uint64 `json:"-"`
	// OK counts completions with status 0.
	OK uint64 `json:"-"`
	// Latency of paired transfers, microseconds.
	Latency Histogram `json:"-"`

	text bool
}

// Span returns the endpoint's active time in microseconds.
func (s *EndpointStats) Span() int64 { return elapsed(s.FirstMicros, s.LastMicros, s.text) }

// BytesPerSecond is Bytes over the endpoint's active span (0 when the
// span is empty).
func (s *EndpointStats) BytesPerSecond() float64 {
	sp := s.Span()
	if sp <= 0 {
		return 0
	}
	return float64(s.Bytes) * 1e6 / float64(sp)
}

// Stats accumulates per-endpoint statistics from an event stream: counts,
// bytes, latency (through its own Pairer), errors and stalls. Memory grows
// with the number of endpoints, never with the number of events.
type Stats struct {
	Pairer *Pairer
	// MaxEndpoints bounds the endpoints tracked (DefaultMaxEndpoints when
	// 0); events of further endpoints are counted in Untracked only.
	MaxEndpoints int
	untracked    uint64
	eps          map[EndpointKey]*EndpointStats
	// recent holds the endpoints of recent events by a hash of their
	// key (epKey): a capture goes back and forth between a few
	// endpoints, and a map lookup per event was a tenth of 'usb stats'.
	recent [16]struct {
		key uint64
		s   *EndpointStats
	}
	events uint64
	first  int64
	last   int64
	text   bool
}

// NewStats returns empty statistics.
func NewStats() *Stats {
	return &Stats{Pairer: NewPairer(), eps: make(map[EndpointKey]*EndpointStats)}
}

// Add accounts ev, pairing it with st.Pairer. It returns the pair when ev
// completed a submission. It does not allocate except for the first event
// of an endpoint or of a new status value.
func (st *Stats) Add(ev *usbmon.Event) (Pair, bool) {
	p, ok := st.Pairer.Add(ev)
	st.Record(ev, p, ok)
	return p, ok
}

// Record accounts ev with a pairing result obtained elsewhere (a Pairer
// that sees every event while Record sees only filtered ones).
func (st *Stats) Record(ev *usbmon.Event, p Pair, ok bool) {
	st.record(ev, &p, ok)
}

// record is Record with the pair by its address (Pipeline.each).
func (st *Stats) record(ev *usbmon.Event, p *Pair, ok bool) {
	if ev.Synthesized {
		return // made at capture start, not traffic
	}
	t := Micros(ev)
	if st.events == 0 {
		st.first = t
		st.text = ev.Fields&usbmon.HasWallClock == 0
	}
	st.last = t
	st.events++
	ep := ev.EndpointAddress()
	// The key from ev's fields one by one: an EndpointKey built in
	// memory and read back whole stalls on its loads (store forwarding).
	key := 1<<63 | uint64(ev.Bus)<<24 | uint64(ev.Device)<<16 | uint64(ep)<<8 | uint64(ev.Transfer)
	r := &st.recent[key*0x9e3779b97f4a7c15>>60]
	s := r.s
	if r.key != key {
		k := EndpointKey{Bus: ev.Bus, Device: ev.Device, Endpoint: ep, Transfer: ev.Transfer}
		s = st.eps[k]
		if s == nil {
			max := st.MaxEndpoints
			if max <= 0 {
				max = DefaultMaxEndpoints
			}
			if len(st.eps) >= max {
				st.untracked++
				return
			}
			s = &EndpointStats{EndpointKey: k, FirstMicros: t, Status: map[int32]uint64{}, text: st.text}
			st.eps[k] = s
		}
		r.key, r.s = key, s
	}
	s.LastMicros = t
	switch ev.Type {
	case usbmon.Submission:
		s.Submissions++
	case usbmon.SubmitError:
		s.SubmitErrors++
		s.Status[ev.Status]++
	case usbmon.Callback:
		s.Completions++
		if ev.Status == 0 {
			s.OK++
		} else {
			s.Status[ev.Status]++
		}
		switch {
		case ev.Status >= 0 || ev.Status == -121 || ev.Status == -18: // short/partial transfers still move data
			s.Bytes += uint64(ev.Length)
		}
		switch {
		case IsStall(ev.Status):
			s.Stalls++
		case IsCancel(ev.Status):
			s.Cancelled++
		case ev.Status < 0 && ev.Status != -18:
			s.Errors++
		}
		if ok {
			s.Latency.Add(p.Latency)
		}
	}
}

// StatusCounts returns the completions and submission errors per status
// value, 0 included.
func (s *EndpointStats) StatusCounts() map[int32]uint64 {
	m := make(map[int32]uint64, len(s.Status)+1)
	for k, v := range s.Status {
		m[k] = v
	}
	if s.OK > 0 {
		m[0] += s.OK
	}
	return m
}

// DefaultMaxEndpoints bounds the endpoints a Stats tracks.
const DefaultMaxEndpoints = 1 << 14

// Untracked returns the number of events not accounted because
// MaxEndpoints endpoints were already tracked.
func (st *Stats) Untracked() uint64 { return st.untracked }

// Events returns the number of events seen.
func (st *Stats) Events() uint64 { return st.events }

// Span returns the time between the first and the last event, microseconds.
func (st *Stats) Span() int64 { return elapsed(st.first, st.last, st.text) }

// Endpoints returns the per-endpoint statistics sorted by bus, device,
// endpoint address and transfer type.
func (st *Stats) Endpoints() []*EndpointStats {
	out := make([]*EndpointStats, 0, len(st.eps))
	for _, s := range st.eps {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EndpointKey.less(out[j].EndpointKey) })
	return out
}

func (a EndpointKey) less(b EndpointKey) bool {
	if a.Bus != b.Bus {
		return a.Bus < b.Bus
	}
	if a.Device != b.Device {
		return a.Device < b.Device
	}
	if a.Endpoint&0x0f != b.Endpoint&0x0f {
		return a.Endpoint&0x0f < b.Endpoint&0x0f
	}
	if a.Endpoint != b.Endpoint {
		return a.Endpoint < b.Endpoint
	}
	return a.Transfer < b.Transfer
}

// DeviceStats sums the endpoints of one device.
type DeviceStats struct {
	Bus    uint16 `json:"bus"`
	Device uint8  `json:"device"`
	EndpointStats
}

// Devices returns per-device totals (latency histograms merged), sorted.
func (st *Stats) Devices() []*DeviceStats {
	m := map[[2]uint16]*DeviceStats{}
	var order [][2]uint16
	for _, e := range st.Endpoints() {
		k := [2]uint16{e.Bus, uint16(e.Device)}
		d := m[k]
		if d == nil {
			d = &DeviceStats{Bus: e.Bus, Device: e.Device}
			d.Status = map[int32]uint64{}
			d.FirstMicros, d.LastMicros, d.text = e.FirstMicros, e.LastMicros, e.text
			m[k] = d
			order = append(order, k)
		}
		d.Submissions += e.Submissions
		d.Completions += e.Completions
		d.SubmitErrors += e.SubmitErrors
		d.Errors += e.Errors
		d.Stalls += e.Stalls
		d.Cancelled += e.Cancelled
		d.Bytes += e.Bytes
		d.OK += e.OK
		if before(e.FirstMicros, d.FirstMicros, e.text) {
			d.FirstMicros = e.FirstMicros
		}
		if before(d.LastMicros, e.LastMicros, e.text) {
			d.LastMicros = e.LastMicros
		}
		for s, n := range e.Status {
			d.Status[s] += n
		}
		d.Latency.Merge(&e.Latency)
	}
	out := make([]*DeviceStats, len(order))
	for i, k := range order {
		out[i] = m[k]
	}
	return out
}
