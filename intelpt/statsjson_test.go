package intelpt

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/iotap/iotap/internal/golden"
)

// ndjsonStatsTrace is a trace with every part of a pt_stats record: three
// PSBs with TSCs (gaps and a time span), TNTs, an IP, an overflow and an
// undecodable byte (an error with its offset).
func ndjsonStatsTrace() []byte {
	var e Encoder
	for i := 0; i < 3; i++ {
		e.Encode(Packet{Kind: KindPSB})
		e.Encode(Packet{Kind: KindTSC, Payload: uint64(1000 * (i + 1))})
		e.Encode(Packet{Kind: KindPSBEnd})
		for j := 0; j <= i; j++ {
			e.Encode(Packet{Kind: KindTNT8, Bits: 3, Payload: 5})
		}
		e.Encode(Packet{Kind: KindTIP, IPC: 6, Payload: 0x401000})
	}
	e.Encode(Packet{Kind: KindOVF})
	b := append(e.Bytes(), 0xd9) // a reserved opcode: an error, resynced at the next PSB
	var f Encoder
	f.Encode(Packet{Kind: KindPSB})
	f.Encode(Packet{Kind: KindPSBEnd})
	return append(b, f.Bytes()...)
}

// TestStatsNDJSONGolden pins the "input" and pt_stats records of 'pt stats
// --json' byte for byte (IOTAP_UPDATE_GOLDEN=1 rewrites the file), and
// checks the values against the trace as built: 4 PSBs 36 to 41 bytes
// apart, TSC 1000..3000, one overflow, one error (the stray 0xd9).
func TestStatsNDJSONGolden(t *testing.T) {
	s := ComputeStats(ndjsonStatsTrace(), Config{})
	b := AppendInputNDJSON(nil, "trace.pt", FormatRaw, "")
	b = AppendStatsNDJSON(b, "", "trace.pt", -1, &s)
	b = AppendStatsNDJSON(b, "report-input.data", "cpu 3", 3, &Stats{Bytes: 10, SkippedBytes: 10})
	golden.Check(t, "pt-stats.ndjson", b)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	var r struct {
		Kind, Stream            string
		CPU                     *int32
		PSBs, Overflows, Errors int64
		PSBGapMin               int64   `json:"psb_gap_min"`
		PSBGapMax               int64   `json:"psb_gap_max"`
		ErrorOffsets            []int64 `json:"error_offsets"`
		FirstTSC                *uint64 `json:"first_tsc"`
		LastTSC                 *uint64 `json:"last_tsc"`
		Kinds                   map[string]int64
	}
	if err := json.Unmarshal(lines[1], &r); err != nil {
		t.Fatal(err)
	}
	if r.Kind != NDJSONStats || r.Stream != "trace.pt" || r.CPU != nil || r.PSBs != 4 || r.PSBGapMin != 36 || r.PSBGapMax != 41 || r.Overflows != 1 ||
		r.Errors != 1 || len(r.ErrorOffsets) != 1 || r.FirstTSC == nil || *r.FirstTSC != 1000 || *r.LastTSC != 3000 || r.Kinds["tnt.8"] != 6 {
		t.Errorf("%+v", r)
	}
	var empty map[string]any
	json.Unmarshal(lines[2], &empty)
	for _, k := range []string{"psb_gap_min", "psb_gap_mean", "psb_gap_max", "first_tsc", "last_tsc"} {
		if v, ok := empty[k]; !ok || v != nil {
			t.Errorf("a stream without PSBs: %s is %v, want null", k, v)
		}
	}
}

// FuzzStatsNDJSON: the pt_stats record of any bytes is one line that
// encoding/json parses, with every value the Stats it was written from.
func FuzzStatsNDJSON(f *testing.F) {
	f.Add(ndjsonStatsTrace(), int32(-1), "trace.pt")
	f.Add([]byte{0x02, 0x82}, int32(7), "cpu \"7\"\n")
	f.Fuzz(func(t *testing.T, data []byte, cpu int32, name string) {
		s := ComputeStats(data, Config{})
		line := AppendStatsNDJSON(nil, name, name, cpu, &s)
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("not one line: %q", line)
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var r struct {
			Kind, File, Stream                      string
			CPU                                     *int32
			Bytes, Packets, PSBs, Overflows, Errors int64
			PSBGapMin                               *int64  `json:"psb_gap_min"`
			PSBGapMean                              *int64  `json:"psb_gap_mean"`
			PSBGapMax                               *int64  `json:"psb_gap_max"`
			ErrorOffsets                            []int64 `json:"error_offsets"`
			Skipped                                 int64   `json:"skipped_bytes"`
			Truncated                               bool
			FirstTSC                                *uint64 `json:"first_tsc"`
			LastTSC                                 *uint64 `json:"last_tsc"`
			Kinds                                   map[string]int64
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		wantName, _ := json.Marshal(name) // invalid UTF-8 reads back as U+FFFD
		var wn string
		json.Unmarshal(wantName, &wn)
		if r.Kind != NDJSONStats || (name != "" && (r.File != wn || r.Stream != wn)) || r.Bytes != s.Bytes || r.Packets != s.Packets ||
			r.PSBs != s.PSBs || r.Overflows != s.Overflows || r.Errors != s.Errors || r.Skipped != s.SkippedBytes || r.Truncated != s.Truncated ||
			len(r.ErrorOffsets) != len(s.ErrorOffsets) {
			t.Fatalf("%s: want %+v", line, s)
		}
		for i, o := range s.ErrorOffsets {
			if r.ErrorOffsets[i] != o {
				t.Fatalf("%s: error offsets, want %v", line, s.ErrorOffsets)
			}
		}
		if (cpu < 0) != (r.CPU == nil) || (cpu >= 0 && *r.CPU != cpu) {
			t.Fatalf("%s: cpu, want %d", line, cpu)
		}
		if (s.PSBs >= 2) != (r.PSBGapMin != nil) || (r.PSBGapMin != nil && (*r.PSBGapMin != s.PSBGapMin || *r.PSBGapMean != s.PSBGapMean || *r.PSBGapMax != s.PSBGapMax)) {
			t.Fatalf("%s: gaps, want %+v", line, s)
		}
		if s.HaveTime != (r.FirstTSC != nil) || (s.HaveTime && (*r.FirstTSC != s.FirstTSC || *r.LastTSC != s.LastTSC)) {
			t.Fatalf("%s: tsc, want %+v", line, s)
		}
		n := 0
		for _, k := range Kinds() {
			if c := s.Count(k); c > 0 {
				n++
				if r.Kinds[k.String()] != c {
					t.Fatalf("%s: %s, want %d", line, k, c)
				}
			}
		}
		if n != len(r.Kinds) {
			t.Fatalf("%s: %d kinds, want %d", line, len(r.Kinds), n)
		}
	})
}
