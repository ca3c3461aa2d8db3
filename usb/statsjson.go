package usb

// The NDJSON shape of 'iotap usb stats --json' (and of the USB objects of
// 'iotap report --json', which add their trace's name): one "device"
// object per device, one "endpoint" object per endpoint. Latencies are in
// microseconds; statuses are counted by name.

// LatencyRecord summarises a latency histogram.
type LatencyRecord struct {
	Count uint64 `json:"count"`
	Min   int64  `json:"min_us"`
	P50   int64  `json:"p50_us"`
	P99   int64  `json:"p99_us"`
	Max   int64  `json:"max_us"`
}

// NewLatencyRecord summarises h.
func NewLatencyRecord(h *Histogram) LatencyRecord {
	return LatencyRecord{Count: h.Count(), Min: h.Min(), P50: h.Quantile(0.5), P99: h.Quantile(0.99), Max: h.Max()}
}

// StatsRecord is a "device" or "endpoint" object (Kind).
type StatsRecord struct {
	Kind         string            `json:"kind"` // "endpoint", "device"
	Bus          uint16            `json:"bus"`
	Device       uint8             `json:"device"`
	Endpoint     *uint8            `json:"endpoint,omitempty"`
	Transfer     string            `json:"transfer,omitempty"`
	Dir          string            `json:"dir,omitempty"`
	VIDPID       string            `json:"vidpid,omitempty"`
	Manufacturer string            `json:"manufacturer,omitempty"`
	Product      string            `json:"product,omitempty"`
	Submissions  uint64            `json:"submissions"`
	Completions  uint64            `json:"completions"`
	SubmitErrors uint64            `json:"submit_errors"`
	Errors       uint64            `json:"errors"`
	Stalls       uint64            `json:"stalls"`
	Cancelled    uint64            `json:"cancelled"`
	Bytes        uint64            `json:"bytes"`
	BytesPerSec  float64           `json:"bytes_per_sec"`
	SpanUs       int64             `json:"span_us"`
	Latency      LatencyRecord     `json:"latency"`
	Status       map[string]uint64 `json:"status"`
}

// StatusNames counts a status count by status name.
func StatusNames(m map[int32]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for s, n := range m {
		out[StatusName(s)] += n
	}
	return out
}

// DeviceRecord is d's "device" object; vidpid ("vvvv:pppp"), manufacturer
// and product are the device's identity where known ("" otherwise).
func DeviceRecord(d *DeviceStats, vidpid, manufacturer, product string) StatsRecord {
	r := countsRecord(&d.EndpointStats)
	r.Kind, r.Bus, r.Device = "device", d.Bus, d.Device
	r.VIDPID, r.Manufacturer, r.Product = vidpid, manufacturer, product
	return r
}

// EndpointRecord is s's "endpoint" object; vidpid as for DeviceRecord.
func EndpointRecord(s *EndpointStats, vidpid string) StatsRecord {
	r := countsRecord(s)
	ep := s.Endpoint
	r.Kind, r.Bus, r.Device, r.Endpoint = "endpoint", s.Bus, s.Device, &ep
	r.Transfer, r.Dir, r.VIDPID = s.Transfer.String(), DirectionName(ep&0x80 != 0), vidpid
	return r
}

func countsRecord(s *EndpointStats) StatsRecord {
	return StatsRecord{Submissions: s.Submissions, Completions: s.Completions, SubmitErrors: s.SubmitErrors,
		Errors: s.Errors, Stalls: s.Stalls, Cancelled: s.Cancelled, Bytes: s.Bytes, BytesPerSec: s.BytesPerSecond(),
		SpanUs: s.Span(), Latency: NewLatencyRecord(&s.Latency), Status: StatusNames(s.StatusCounts())}
}
