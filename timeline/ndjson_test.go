package timeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/golden"
)

// ndjsonStats is a split timeline of every source kind, with a window,
// warnings that need escaping and a PT input of a perf.data stream.
func ndjsonStats() (*Stats, *SplitStats) {
	from, to := int64(-5), int64(1_000_000_000)
	s := &Stats{
		Inputs: []*InputStats{
			{Path: "usb.pcapng", Kind: KindUSB, Format: "usbmon pcapng", Clock: "CLOCK_REALTIME (usbmon binary)", OffsetNS: -1795291775000000050, Aligned: true,
				Events: 12, FirstNS: 6690416950, LastNS: 7273389950, Slices: 6, Unmatched: 1, Orphans: 2, Overflow: 3, BytesRead: 9564},
			{Path: "0u.txt", Kind: KindUSB, Format: "usbmon 1u text", Clock: "usbmon text stamp"},
			{Path: "mmio.log.zst", Kind: KindMMIO, Format: "mmiotrace log", Clock: "trace clock local", Events: 12656, Lost: 7, Skipped: 1,
				FirstNS: 1, LastNS: 2, Named: 12649, Accesses: 12649, Markers: 6, Truncated: true, Truncation: "line 12657", Seeked: true},
			{Path: "events.ndjson", Kind: KindEvents, Format: "user_events NDJSON", Clock: "trace clock of the user_events instance", Events: 4, Warnings: 1},
			{Path: "perf.data", Stream: "cpu 2", Kind: KindPT, Format: "perf.data", Clock: "perf time (TSC converted with the file's TIME_CONV)", Events: 9, NotTimed: 3, Dropped: 1},
		},
		Aligned: false, Markers: 8, Warnings: []string{"inputs are not aligned: \"no clocks\"\tfile"},
		Writer:      WriterStats{Packets: 12713, Tracks: 12, Slices: 6, Ends: 6, Instants: 12684, Counters: 4, Interned: 872, Bytes: 651701},
		Interrupted: true, Window: &TimeWindow{FromNS: &from, ToNS: &to},
	}
	sp := &SplitStats{Stats: s, Split: true, Dir: "t.d", OverviewBytes: 4096, Index: &Index{MaxSize: 1 << 20, BucketNS: 1000000,
		Windows: []Window{{File: "0001.pftrace", StartNS: 0, EndNS: 500, Bytes: 1000, Events: 10, PerInput: []int64{4, 6, 0, 0, 0}, Lost: 1,
			Top: []Activity{{Input: "mmio.log.zst", Track: "EECD", Events: 6}}}, {File: "0002.pftrace", StartNS: 500, EndNS: 900}}}}
	return s, sp
}

// TestTimelineNDJSONGolden pins 'iotap timeline --json' byte for byte
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file): a split timeline of every
// kind of input, then the same unsplit without a window. The values are
// the Stats'; FuzzTimelineNDJSON checks them field by field.
func TestTimelineNDJSONGolden(t *testing.T) {
	s, sp := ndjsonStats()
	b := s.AppendNDJSON(nil, sp)
	s.Window, s.Interrupted, s.Warnings = nil, false, nil
	b = s.AppendNDJSON(b, nil)
	golden.Check(t, "timeline.ndjson", b)
}

// FuzzTimelineNDJSON: every line is a JSON object that encoding/json
// parses, and the records read back as the Stats they were written from.
func FuzzTimelineNDJSON(f *testing.F) {
	f.Add("usb.pcapng", "", "usbmon pcapng", int64(-3), int64(12), uint64(5), uint64(9), "warn \"x\"", int64(4), true, true)
	f.Add("\xff", "cpu 1", "", int64(0), int64(0), uint64(0), uint64(0), "", int64(-1), false, false)
	f.Fuzz(func(t *testing.T, path, stream, format string, off, events int64, first, last uint64, warn string, n int64, aligned, split bool) {
		s, sp := ndjsonStats()
		for i, in := range s.Inputs {
			in.Path, in.Stream, in.Format, in.OffsetNS, in.Events, in.FirstNS, in.LastNS, in.Aligned = path+strings.Repeat("x", i), stream, format, off, events, first, last, aligned
			in.Lost, in.Skipped, in.Slices, in.Named, in.NotTimed, in.BytesRead = n, n+1, n+2, n+3, n+4, n+5
		}
		s.Warnings = []string{warn, warn + "2"}
		s.Markers, s.Writer.Bytes = n, n*2
		if !split {
			sp = nil
		}
		b := s.AppendNDJSON(nil, sp)
		text := func(s string) string {
			j, _ := json.Marshal(s)
			var w string
			json.Unmarshal(j, &w)
			return w
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		var recs []map[string]any
		for sc.Scan() {
			var r map[string]any
			d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			d.UseNumber()
			if err := d.Decode(&r); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			recs = append(recs, r)
		}
		ni := len(s.Inputs)
		nw := 0
		if split {
			nw = len(sp.Index.Windows)
		}
		if len(recs) != 2*ni+nw+1 {
			t.Fatalf("%d records for %d inputs, %d windows:\n%s", len(recs), ni, nw, b)
		}
		num := func(r map[string]any, k string) string { v, _ := r[k].(json.Number); return string(v) }
		itoa := func(v int64) string { return json.Number(strings.TrimSpace(string(mustJSON(v)))).String() }
		for i, in := range s.Inputs {
			r := recs[i]
			if r["kind"] != "input" || r["source"] != string(in.Kind) || r["file"] != text(in.Path) || (format == "") != (r["format"] == nil) || format != "" && r["format"] != text(format) {
				t.Fatalf("input record %v, want %+v", r, in)
			}
			r = recs[ni+i]
			if r["kind"] != NDJSONInput || r["file"] != text(in.Path) || (stream == "") != (r["stream"] == nil) || stream != "" && r["stream"] != text(stream) ||
				num(r, "offset_ns") != itoa(off) || num(r, "events") != itoa(events) || r["aligned"] != aligned || num(r, "lost") != itoa(n) || num(r, "bytes_read") != itoa(n+5) {
				t.Fatalf("timeline_input %v, want %+v", r, in)
			}
			if events > 0 != (r["first_ns"] != nil) || events > 0 && (num(r, "first_ns") != string(mustJSON(first)) || num(r, "last_ns") != string(mustJSON(last))) {
				t.Fatalf("timeline_input %v: first/last, want %d %d (%d events)", r, first, last, events)
			}
		}
		sum := recs[len(recs)-1]
		ws, _ := sum["warnings"].([]any)
		if sum["kind"] != NDJSONSummary || num(sum, "markers") != itoa(n) || len(ws) != 2 || ws[0] != text(warn) || ws[1] != text(warn+"2") || sum["split"] != split {
			t.Fatalf("summary %v", sum)
		}
		if w, _ := sum["writer"].(map[string]any); num(w, "bytes") != itoa(2*n) {
			t.Fatalf("summary writer %v", sum["writer"])
		}
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
