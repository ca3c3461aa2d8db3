package timeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestPTOverflowInOverview: the overflows (OVF) of a raw PT stream split
// over several detail windows are its loss in the window that holds each
// and in the overview: the overview's "lost events/s" counter sums to the
// number of OVF packets written, with one loss instant each at the
// overflow's time; each window's lost count is the number of overflows
// whose time is inside it; protoc decodes the overview. The stream is
// built here (intelpt.Encoder) with the overflows at known TSCs, which
// are the oracle.
func TestPTOverflowInOverview(t *testing.T) {
	const segs = 6000
	ovfAt := map[int]bool{40: true, 41: true, 2700: true, 5999: true}
	var e intelpt.Encoder
	var ovfTimes []uint64 // timeline ns: TSC ticks from the first TSC (no clocks)
	for k := 0; k < segs; k++ {
		tsc := uint64(1_000_000 + 1000*k)
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: tsc})
		e.Encode(intelpt.Packet{Kind: intelpt.KindCBR, Payload: 20})
		e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x401000})
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		for i := 0; i < 4; i++ {
			e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 4, Payload: 0b1010})
		}
		if ovfAt[k] {
			e.Encode(intelpt.Packet{Kind: intelpt.KindOVF})
			e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x402000})
			ovfTimes = append(ovfTimes, tsc-1_000_000)
		}
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "cpu0.pt")
	if err := os.WriteFile(in, e.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(v int64) { minMaxSize = v }(minMaxSize)
	minMaxSize = 4 << 10
	out := filepath.Join(dir, "out.pftrace")
	st, err := ExportSplit(context.Background(), out, []string{in}, Options{}, SplitOptions{MaxSize: 48 << 10})
	if err != nil {
		ix, _ := os.ReadFile(filepath.Join(dir, "out.d", "index.json"))
		t.Fatal(err, len(ix), string(ix[:min(len(ix), 3000)]))
	}
	if !st.Split || len(st.Index.Windows) < 3 {
		t.Fatalf("not split into several windows: %+v", st.Index)
	}
	// each window: the overflows inside it
	var sumLost uint64
	for _, w := range st.Index.Windows {
		var want uint64
		for _, ts := range ovfTimes {
			if ts >= w.StartNS && ts < w.EndNS {
				want++
			}
		}
		if w.Lost != want {
			t.Errorf("window %s [%d, %d): lost %d, %d overflows in it", w.File, w.StartNS, w.EndNS, w.Lost, want)
		}
		sumLost += w.Lost
	}
	if sumLost != uint64(len(ovfTimes)) {
		t.Errorf("windows lose %d, the stream has %d overflows", sumLost, len(ovfTimes))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	protocDecode(t, data)
	ov := decodeTrace(t, data)
	var counter []dEvent
	var instants []uint64
	for _, ev := range ov.events {
		p := ov.path(ev.track)
		if ev.typ == typeCounter && strings.HasSuffix(p, "/lost events/s") {
			counter = append(counter, ev)
		}
		if ev.name == "events lost" {
			instants = append(instants, ev.ts)
		}
	}
	if got := math.Round(integrate(counter)); got != float64(len(ovfTimes)) {
		t.Errorf("overview: %v lost events summed over time, the stream has %d overflows", got, len(ovfTimes))
	}
	if len(instants) != len(ovfTimes) {
		t.Fatalf("overview: %d loss instants, %d overflows", len(instants), len(ovfTimes))
	}
	for i, ts := range instants {
		if ts != ovfTimes[i] {
			t.Errorf("overview: loss instant %d at %d ns, the overflow at %d", i, ts, ovfTimes[i])
		}
	}
	t.Logf("%d windows, overflows at %v", len(st.Index.Windows), ovfTimes)
}
