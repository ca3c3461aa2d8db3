package intelpt

import "github.com/iotap/iotap/internal/ndjson"

// NDJSONStats is the kind of the record of one stream's packet statistics
// (docs/ndjson.md), written by 'iotap pt stats --json' and, for PT
// inputs, by 'iotap report --json'.
const NDJSONStats = "pt_stats"

// Input formats of the "input" record of PT streams.
const (
	FormatRaw        = "raw Intel PT"
	FormatPerfData   = "perf.data"
	FormatCaptureDir = "pt capture directory"
)

// AppendStatsNDJSON appends the pt_stats record of s: the stream's name
// ("cpu N", "tid N", or the raw file), its CPU (cpu < 0: null), and, when
// file is not "" (report --json), the input it belongs to. Offsets and
// gaps are in trace bytes; the gaps are null with fewer than two PSBs, the
// TSC span null without timing packets.
func AppendStatsNDJSON(b []byte, file, stream string, cpu int32, s *Stats) []byte {
	b = ndjson.Begin(b, NDJSONStats)
	if file != "" {
		b = ndjson.Str(b, "file", file)
	}
	b = ndjson.Str(b, "stream", stream)
	if cpu >= 0 {
		b = ndjson.Int(b, "cpu", int64(cpu))
	} else {
		b = ndjson.Null(b, "cpu")
	}
	b = ndjson.Int(b, "bytes", s.Bytes)
	b = ndjson.Int(b, "packets", s.Packets)
	b = ndjson.Open(b, "kinds")
	for _, k := range Kinds() {
		if n := s.Count(k); n > 0 {
			b = ndjson.Int(b, k.String(), n)
		}
	}
	b = ndjson.Close(b)
	b = ndjson.Int(b, "psbs", s.PSBs)
	if s.PSBs >= 2 {
		b = ndjson.Int(b, "psb_gap_min", s.PSBGapMin)
		b = ndjson.Int(b, "psb_gap_mean", s.PSBGapMean)
		b = ndjson.Int(b, "psb_gap_max", s.PSBGapMax)
	} else {
		b = ndjson.Null(b, "psb_gap_min")
		b = ndjson.Null(b, "psb_gap_mean")
		b = ndjson.Null(b, "psb_gap_max")
	}
	b = ndjson.Int(b, "overflows", s.Overflows)
	b = ndjson.Int(b, "errors", s.Errors)
	b = ndjson.OpenArray(b, "error_offsets")
	for _, o := range s.ErrorOffsets {
		b = ndjson.IntElem(b, o)
	}
	b = ndjson.CloseArray(b)
	b = ndjson.Int(b, "skipped_bytes", s.SkippedBytes)
	b = ndjson.Bool(b, "truncated", s.Truncated)
	if s.HaveTime {
		b = ndjson.Uint(b, "first_tsc", s.FirstTSC)
		b = ndjson.Uint(b, "last_tsc", s.LastTSC)
	} else {
		b = ndjson.Null(b, "first_tsc")
		b = ndjson.Null(b, "last_tsc")
	}
	return ndjson.End(b)
}

// ClockPerf names perf's sample clock (perf_clock: ns, on the traced
// machine's boot clock unless perf was given -k) in the "input" record of
// streams whose times are converted with perf.data's TIME_CONV.
const ClockPerf = "perf"

// AppendInputNDJSON appends the "input" record that starts a PT stream:
// the file read, its format (FormatRaw, FormatPerfData, ...) and the clock
// of its _ns times ("" when it has none).
func AppendInputNDJSON(b []byte, file, format, clock string) []byte {
	return ndjson.End(ndjson.Input(b, "pt", file, format, clock))
}
