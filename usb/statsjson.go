package usb

import (
	"github.com/iotap/iotap/usbmon"
	"sort"

	"github.com/iotap/iotap/internal/ndjson"
)

// The records of 'iotap usb stats --json' (and of the USB part of 'iotap
// report --json', which adds the trace's file): one "usb_device" record
// per device, one "usb_endpoint" record per endpoint, a "usb_summary"
// last. Durations are in nanoseconds (the capture's resolution is a
// microsecond); statuses are counted by name.

// LatencyRecord summarises a latency histogram; the values are nil (null)
// when Count is 0.
type LatencyRecord struct {
	Count uint64 `json:"count"`
	Min   *int64 `json:"min_ns"`
	P50   *int64 `json:"p50_ns"`
	P99   *int64 `json:"p99_ns"`
	Max   *int64 `json:"max_ns"`
}

// NewLatencyRecord summarises h (microseconds).
func NewLatencyRecord(h *Histogram) LatencyRecord {
	r := LatencyRecord{Count: h.Count()}
	if r.Count == 0 {
		return r
	}
	ns := func(us int64) *int64 { v := us * 1000; return &v }
	r.Min, r.P50, r.P99, r.Max = ns(h.Min()), ns(h.Quantile(0.5)), ns(h.Quantile(0.99)), ns(h.Max())
	return r
}

// StatsRecord is a "usb_device" or "usb_endpoint" record (Kind).
type StatsRecord struct {
	Kind         string            `json:"kind"`           // KindDevice, KindEndpoint
	File         string            `json:"file,omitempty"` // report --json: the trace
	Bus          uint16            `json:"bus"`
	Dev          uint8             `json:"dev"`
	EP           *uint8            `json:"ep,omitempty"` // endpoints: address byte, bit 7 set for IN
	Transfer     string            `json:"transfer,omitempty"`
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
	SpanNs       int64             `json:"span_ns"`
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

// DeviceRecord is d's "usb_device" record; vidpid ("vvvv:pppp"),
// manufacturer and product are the device's identity where known (""
// otherwise).
func DeviceRecord(d *DeviceStats, vidpid, manufacturer, product string) StatsRecord {
	r := countsRecord(&d.EndpointStats)
	r.Kind, r.Bus, r.Dev = KindDevice, d.Bus, d.Device
	r.VIDPID, r.Manufacturer, r.Product = vidpid, manufacturer, product
	return r
}

// EndpointRecord is s's "usb_endpoint" record; vidpid as for DeviceRecord.
func EndpointRecord(s *EndpointStats, vidpid string) StatsRecord {
	r := countsRecord(s)
	ep := s.Endpoint
	r.Kind, r.Bus, r.Dev, r.EP = KindEndpoint, s.Bus, s.Device, &ep
	r.Transfer, r.VIDPID = s.Transfer.String(), vidpid
	return r
}

func countsRecord(s *EndpointStats) StatsRecord {
	return StatsRecord{Submissions: s.Submissions, Completions: s.Completions, SubmitErrors: s.SubmitErrors,
		Errors: s.Errors, Stalls: s.Stalls, Cancelled: s.Cancelled, Bytes: s.Bytes, BytesPerSec: s.BytesPerSecond(),
		SpanNs: s.Span() * 1000, Latency: NewLatencyRecord(&s.Latency), Status: StatusNames(s.StatusCounts())}
}

// AppendJSON appends r as one NDJSON line.
func (r *StatsRecord) AppendJSON(b []byte) []byte {
	b = ndjson.Begin(b, r.Kind)
	if r.File != "" {
		b = ndjson.Str(b, "file", r.File)
	}
	b = ndjson.Uint(b, "bus", uint64(r.Bus))
	b = ndjson.Uint(b, "dev", uint64(r.Dev))
	if r.EP != nil {
		b = ndjson.Uint(b, "ep", uint64(*r.EP))
	}
	for _, f := range [...]struct{ k, v string }{{"transfer", r.Transfer}, {"vidpid", r.VIDPID}, {"manufacturer", r.Manufacturer}, {"product", r.Product}} {
		if f.v != "" {
			b = ndjson.Str(b, f.k, f.v)
		}
	}
	b = ndjson.Uint(b, "submissions", r.Submissions)
	b = ndjson.Uint(b, "completions", r.Completions)
	b = ndjson.Uint(b, "submit_errors", r.SubmitErrors)
	b = ndjson.Uint(b, "errors", r.Errors)
	b = ndjson.Uint(b, "stalls", r.Stalls)
	b = ndjson.Uint(b, "cancelled", r.Cancelled)
	b = ndjson.Uint(b, "bytes", r.Bytes)
	b = ndjson.Float(b, "bytes_per_sec", r.BytesPerSec)
	b = ndjson.Int(b, "span_ns", r.SpanNs)
	b = r.Latency.appendJSON(ndjson.Open(b, "latency"))
	b = ndjson.Close(b)
	b = ndjson.Open(b, "status")
	names := make([]string, 0, len(r.Status))
	for n := range r.Status {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b = ndjson.Uint(b, n, r.Status[n])
	}
	return ndjson.End(ndjson.Close(b))
}

func (l *LatencyRecord) appendJSON(b []byte) []byte {
	b = ndjson.Uint(b, "count", l.Count)
	for _, f := range [...]struct {
		k string
		v *int64
	}{{"min_ns", l.Min}, {"p50_ns", l.P50}, {"p99_ns", l.P99}, {"max_ns", l.Max}} {
		if f.v == nil {
			b = ndjson.Null(b, f.k)
		} else {
			b = ndjson.Int(b, f.k, *f.v)
		}
	}
	return b
}

// AppendStatsNDJSON appends the records of 'iotap usb stats --json'
// (docs/ndjson.md) for st, whose events were paired as c: a "usb_device"
// record per device and a "usb_endpoint" record per endpoint, named by
// the identities ids learnt (nil: none), then the "usb_summary" record.
// file, when not "", names the trace in every record (StatsRecord.File:
// 'iotap report --json').
func AppendStatsNDJSON(b []byte, file string, st *Stats, c PairCounts, ids *Identities) []byte {
	for _, d := range st.Devices() {
		v, m, p := ids.Names(d.Bus, d.Device)
		r := DeviceRecord(d, v, m, p)
		r.File = file
		b = r.AppendJSON(b)
	}
	for _, s := range st.Endpoints() {
		v, _, _ := ids.Names(s.Bus, s.Device)
		r := EndpointRecord(s, v)
		r.File = file
		b = r.AppendJSON(b)
	}
	return AppendStatsSummary(b, file, st, c)
}

// AppendStatsSummary appends the "usb_summary" record of st, whose events
// were paired as c; file as StatsRecord.File.
func AppendStatsSummary(b []byte, file string, st *Stats, c PairCounts) []byte {
	b = ndjson.Begin(b, KindStats)
	if file != "" {
		b = ndjson.Str(b, "file", file)
	}
	b = ndjson.Uint(b, "events", st.Events())
	b = ndjson.Uint(b, "untracked_events", st.Untracked())
	b = ndjson.Int(b, "span_ns", st.Span()*1000)
	b = appendPairCounts(ndjson.Open(b, "pairing"), &c)
	return ndjson.End(ndjson.Close(b))
}

func appendPairCounts(b []byte, c *PairCounts) []byte {
	b = ndjson.Uint(b, "pairs", c.Pairs)
	b = ndjson.Uint(b, "unmatched_submissions", c.Unmatched)
	b = ndjson.Uint(b, "superseded_submissions", c.Superseded)
	b = ndjson.Uint(b, "in_flight", c.InFlight)
	b = ndjson.Uint(b, "orphan_completions", c.Orphans)
	b = ndjson.Uint(b, "overflow", c.Overflow)
	b = ndjson.Uint(b, "submit_errors", c.SubmitErrors)
	return ndjson.Uint(b, "synthesized", c.Synthesized)
}

// AppendPairSummary appends the "usb_pair_summary" record: the counts of
// 'iotap usb pair'.
func AppendPairSummary(b []byte, c PairCounts) []byte {
	return ndjson.End(appendPairCounts(ndjson.Begin(b, KindPairSummary), &c))
}

// AppendPair appends the "usb_pair" record of p, completed by ev; ids
// name the request of a control transfer.
func AppendPair(b []byte, p Pair, ev *usbmon.Event, ids *Identities) []byte {
	b = ndjson.Begin(b, KindPair)
	b = ndjson.Uint(b, "submit_seq", p.Submit.Seq+1)
	b = ndjson.Uint(b, "complete_seq", p.Seq+1)
	b = ndjson.Int(b, "ts_ns", p.Micros*1000)
	b = ndjson.HexUint(b, "urb_id", p.ID)
	b = ndjson.Str(b, "transfer", p.Transfer.String())
	b = ndjson.Uint(b, "bus", uint64(p.Bus))
	b = ndjson.Uint(b, "dev", uint64(p.Device))
	b = ndjson.Uint(b, "ep", uint64(p.Endpoint))
	b = ndjson.Int(b, "status", int64(ev.Status))
	b = ndjson.Str(b, "status_name", StatusName(ev.Status))
	b = ndjson.Uint(b, "requested", uint64(p.Submit.Length))
	b = ndjson.Uint(b, "actual", uint64(p.Length))
	b = ndjson.Int(b, "latency_ns", p.Latency*1000)
	b = appendRequest(b, p.Submit, p.Bus, p.Device, ids)
	return ndjson.End(b)
}

// AppendUnmatched appends the "usb_unmatched" record of the submission s
// of key k that never completed; state is "superseded" (its URB was
// submitted again) or "in_flight" (pending at the end of the input).
func AppendUnmatched(b []byte, state string, k Key, s Submission, ids *Identities) []byte {
	b = ndjson.Begin(b, KindUnmatched)
	b = ndjson.Str(b, "state", state)
	b = ndjson.Uint(b, "submit_seq", s.Seq+1)
	b = ndjson.Int(b, "ts_ns", s.Micros*1000)
	b = ndjson.HexUint(b, "urb_id", k.ID)
	b = ndjson.Str(b, "transfer", k.Transfer.String())
	b = ndjson.Uint(b, "bus", uint64(k.Bus))
	b = ndjson.Uint(b, "dev", uint64(k.Device))
	b = ndjson.Uint(b, "ep", uint64(k.Endpoint))
	b = ndjson.Uint(b, "requested", uint64(s.Length))
	b = appendRequest(b, s, k.Bus, k.Device, ids)
	return ndjson.End(b)
}

// appendRequest appends the request of a control submission: its name
// and its description (the summary of 'usb read').
func appendRequest(b []byte, s Submission, bus uint16, dev uint8, ids *Identities) []byte {
	if !s.HasSetup {
		return b
	}
	hint := ClassHint(ids, bus, dev, s.Setup)
	b = ndjson.Str(b, "request", s.Setup.Name(hint))
	return ndjson.Str(b, "summary", s.Setup.Describe(hint))
}
