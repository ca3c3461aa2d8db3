package mmiotrace

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/golden"
)

// replayNDJSONLog has a device, a read, two writes (one outside the device's
// BAR: unmapped) and a mark.
const replayNDJSONLog = "VERSION 20070824\n" +
	"PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000\n" +
	"MAP 8.286086 1 0xfebc0000 0xff508fd9c0220000 0x20000 0x0 0\n" +
	"R 4 8.288891 1 0xfebc0008 0x80080783 0x0 0\n" +
	"MARK 8.29 probe\n" +
	"W 2 8.294406 1 0xfebc00d8 0xffff 0xffffffffc0010010 0\n" +
	"W 4 8.3 1 0xfec00000 0x1 0x0 0\n"

// TestReplayNDJSONGolden pins 'mmio replay --json' byte for byte
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file): a dry run with --check-reads
// (input, an R and a W access, the summary), then a replay on a target
// whose reads differ (a divergence, its summary). The values are the
// log's (phys 0xfebc00d8 is offset 0xd8 of BAR 0 at 0xfebc0000).
func TestReplayNDJSONGolden(t *testing.T) {
	var out bytes.Buffer
	pr := NewReplayPrinter(&out, true)
	pr.Input("e1000.log", "")
	opt := ReplayOptions{CheckReads: true, OnAccess: pr.Access}
	st, err := Replay(context.Background(), strings.NewReader(replayNDJSONLog), DryRun(&opt), opt)
	if err != nil {
		t.Fatal(err)
	}
	pr.Summary(st, true)
	opt = ReplayOptions{CheckReads: true, OnDivergence: pr.Divergence}
	d := DryRun(&opt).(*dryTarget)
	st, err = Replay(context.Background(), strings.NewReader(replayNDJSONLog), offByOne{d}, opt)
	if err != nil {
		t.Fatal(err)
	}
	pr.Summary(st, false)
	golden.Check(t, "mmio-replay.ndjson", out.Bytes())
}

// TestReplayPrinterNoAllocs: printing an access record allocates nothing
// once the buffer has grown.
func TestReplayPrinterNoAllocs(t *testing.T) {
	var out bytes.Buffer
	out.Grow(1 << 20)
	pr := NewReplayPrinter(&out, true)
	bar := &BAR{Addr: PCIAddr{Bus: 3}, Index: 2}
	r := Record{Kind: KindWrite, Width: 4, Time: Timestamp{NS: 8294406000}, Phys: 0xfebc00d8, Value: 0xffffffff}
	pr.Access(1, &r, Location{BAR: bar, Offset: 0xd8})
	if n := testing.AllocsPerRun(100, func() { pr.Access(1, &r, Location{BAR: bar, Offset: 0xd8}) }); n != 0 {
		t.Errorf("%v allocations per access record", n)
	}
}

// FuzzReplayNDJSON: every mmio_replay_* record is one line that
// encoding/json parses, and its values read back as the access's, the
// location's and the counts'.
func FuzzReplayNDJSON(f *testing.F) {
	f.Add(int64(4), true, uint8(4), uint64(8288891000), uint64(0xfebc0008), uint64(0x80080783), uint16(0), uint8(0), uint8(3), uint8(0), 0, uint64(8), uint64(0x80080784), true, int64(3))
	f.Add(int64(-1), false, uint8(255), uint64(1<<64-1), uint64(1<<63), uint64(0), uint16(0xffff), uint8(0xff), uint8(0x1f), uint8(7), 6, uint64(1<<64-1), uint64(0), false, int64(-5))
	f.Fuzz(func(t *testing.T, line int64, write bool, width uint8, ts, phys, value uint64, dom uint16, bus, dev, fn uint8, bar int, off, got uint64, diverged bool, n int64) {
		r := Record{Kind: KindRead, Width: width, Time: Timestamp{NS: ts}, Phys: phys, Value: value}
		if write {
			r.Kind = KindWrite
		}
		b := &BAR{Addr: PCIAddr{Domain: dom, Bus: bus, Dev: dev, Fn: fn}, Index: bar}
		kind := NDJSONReplayAccess
		if diverged {
			kind = NDJSONReplayDivergence
		}
		l := AppendReplayNDJSON(nil, kind, line, &r, Location{BAR: b, Offset: off}, got)
		if bytes.IndexByte(l, '\n') != len(l)-1 {
			t.Fatalf("not one line: %q", l)
		}
		var rec struct {
			Kind     string  `json:"kind"`
			Line     int64   `json:"line"`
			Access   string  `json:"access"`
			TS       uint64  `json:"ts_ns"`
			Phys     string  `json:"phys"`
			Value    string  `json:"value"`
			Location string  `json:"location"`
			BAR      string  `json:"bar"`
			Offset   string  `json:"offset"`
			Width    uint8   `json:"width"`
			Got      *string `json:"got"`
		}
		if err := json.Unmarshal(l, &rec); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		hex := func(s string) uint64 {
			v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
			if err != nil || !strings.HasPrefix(s, "0x") {
				t.Fatalf("%s: %q is not 0x hex", l, s)
			}
			return v
		}
		k := RegKey{Dev: b.Addr, HasBAR: true, BAR: bar, Offset: off, Width: width}
		if rec.Kind != kind || rec.Line != line || rec.Access != r.Kind.String() || rec.TS != ts || hex(rec.Phys) != phys || hex(rec.Value) != value ||
			rec.Location != k.String() || rec.BAR != b.Addr.String()+"/"+strconv.Itoa(bar) || hex(rec.Offset) != off || rec.Width != width {
			t.Fatalf("%s: want %+v at %s", l, r, k)
		}
		if diverged != (rec.Got != nil) || diverged && hex(*rec.Got) != got {
			t.Fatalf("%s: got, divergence %v", l, diverged)
		}
		st := ReplayStats{Writes: n, Reads: n + 1, Divergences: n + 2, Unmapped: -n, Skipped: line, Lost: got}
		var s struct {
			Kind                                          string
			DryRun                                        bool `json:"dry_run"`
			Writes, Reads, Divergences, Unmapped, Skipped int64
			Lost                                          uint64
		}
		sl := st.AppendNDJSON(nil, write)
		if err := json.Unmarshal(sl, &s); err != nil {
			t.Fatalf("%s: %v", sl, err)
		}
		if s.Kind != NDJSONReplaySummary || s.DryRun != write || s.Writes != st.Writes || s.Reads != st.Reads || s.Divergences != st.Divergences ||
			s.Unmapped != st.Unmapped || s.Skipped != st.Skipped || s.Lost != st.Lost {
			t.Fatalf("%s: want %+v", sl, st)
		}
	})
}
