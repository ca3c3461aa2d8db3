package intelpt

// StatsRecord is the NDJSON shape of a stream's packet statistics, as
// 'iotap pt stats --json' prints it (after the stream's name) and 'iotap
// report --json' embeds it. Offsets and gaps are in trace bytes.
type StatsRecord struct {
	CPU          *int32           `json:"cpu,omitempty"`
	Bytes        int64            `json:"bytes"`
	Packets      int64            `json:"packets"`
	Kinds        map[string]int64 `json:"kinds"`
	PSBs         int64            `json:"psbs"`
	PSBGapMin    int64            `json:"psb_gap_min"`
	PSBGapMean   int64            `json:"psb_gap_mean"`
	PSBGapMax    int64            `json:"psb_gap_max"`
	Overflows    int64            `json:"overflows"`
	Errors       int64            `json:"errors"`
	ErrorOffsets []int64          `json:"error_offsets,omitempty"`
	Skipped      int64            `json:"skipped_bytes"`
	Truncated    bool             `json:"truncated"`
	FirstTSC     *uint64          `json:"first_tsc,omitempty"`
	LastTSC      *uint64          `json:"last_tsc,omitempty"`
}

// NewStatsRecord is the record of s; cpu < 0 leaves the CPU out.
func NewStatsRecord(s *Stats, cpu int32) StatsRecord {
	r := StatsRecord{Bytes: s.Bytes, Packets: s.Packets, Kinds: map[string]int64{},
		PSBs: s.PSBs, PSBGapMin: s.PSBGapMin, PSBGapMean: s.PSBGapMean, PSBGapMax: s.PSBGapMax,
		Overflows: s.Overflows, Errors: s.Errors, ErrorOffsets: s.ErrorOffsets, Skipped: s.SkippedBytes, Truncated: s.Truncated}
	if cpu >= 0 {
		r.CPU = &cpu
	}
	for _, k := range Kinds() {
		if n := s.Count(k); n > 0 {
			r.Kinds[k.String()] = n
		}
	}
	if s.HaveTime {
		first, last := s.FirstTSC, s.LastTSC
		r.FirstTSC, r.LastTSC = &first, &last
	}
	return r
}
