package timeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

func ptStream(t *testing.T, pkts ...intelpt.Packet) []byte {
	t.Helper()
	var b []byte
	for i := range pkts {
		var err error
		if b, err = intelpt.Append(b, &pkts[i]); err != nil {
			t.Fatalf("encoding %v: %v", pkts[i].Kind, err)
		}
	}
	return b
}

func TestExportPT(t *testing.T) {
	psb := intelpt.Packet{Kind: intelpt.KindPSB}
	tnt := intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 6, Payload: 0x2a}
	pad := intelpt.Packet{Kind: intelpt.KindPad}
	var pkts []intelpt.Packet
	pkts = append(pkts, psb, intelpt.Packet{Kind: intelpt.KindOVF}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 1000}, intelpt.Packet{Kind: intelpt.KindPSBEnd})
	for i := 0; i < 100; i++ {
		pkts = append(pkts, tnt)
	}
	pkts = append(pkts, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 2000}, intelpt.Packet{Kind: intelpt.KindOVF},
		intelpt.Packet{Kind: intelpt.KindPwrE, Type: 2, Sub: 1}, pad, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 3000})
	data := ptStream(t, pkts...)
	// big enough to cross decode chunks
	for len(data) < ptChunk+100 {
		data = append(data, ptStream(t, pad)...)
	}
	data = append(data, ptStream(t, psb, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 5000}, intelpt.Packet{Kind: intelpt.KindTraceStop})...)
	dir := t.TempDir()
	p := filepath.Join(dir, "raw.pt")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	clocks := &Clocks{Sources: map[string]SourceClock{"pt": {OffsetNS: 10, TSC: &TSCConversion{Zero: 0, Mult: 1 << 9, Shift: 10}}}}
	st, out := export(t, []string{p}, Options{Clocks: clocks})
	in := st.Inputs[0]
	if in.Format != "raw Intel PT" || in.Dropped != 2 || in.NotTimed != 1 || in.Skipped != 0 || in.Truncated {
		t.Errorf("stats %+v", *in)
	}
	tr := decodeTrace(t, out)
	var names []string
	var times []uint64
	var values []float64
	for _, e := range tr.events {
		if e.typ == typeCounter {
			values = append(values, e.value)
			continue
		}
		names = append(names, e.name)
		times = append(times, e.ts)
	}
	// TSC ticks are halved (mult/2^shift = 1/2), then offset by 10 ns
	want := []string{"overflow", "power entry", "trace stop"}
	wantTS := []uint64{1010, 1010, 2510}
	if len(names) != 3 || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] || times[0] != wantTS[0] || times[2] != wantTS[2] {
		t.Errorf("instants %v at %v, want %v at %v", names, times, want, wantTS)
	}
	// PSBEND (2 bytes), 100 TNT-8 (1 byte) and the TSC (8 bytes) between
	// TSC 1000 and 2000 (500 ns)
	if len(values) != 3 || values[0] != float64(2+100+8)*1e9/500 {
		t.Errorf("bandwidth %v", values)
	}
	if tr.lostMark != 1 {
		t.Errorf("%d data-loss marks, want 1 (the OVF after the first TSC)", tr.lostMark)
	}
}
