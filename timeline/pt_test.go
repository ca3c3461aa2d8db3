package timeline

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	if pb := ptStream(t, pad); len(pb) != 1 || pb[0] != 0 {
		t.Fatalf("PAD encodes as %x", pb)
	}
	data = append(data, make([]byte, ptChunk+100-len(data))...) // PADs

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

// perfDataPT lays out a minimal perf.data file (file mode: header, one
// attribute, PERF_RECORD_AUXTRACE records) holding one PT stream per CPU.
func perfDataPT(streams map[int32][]byte) []byte {
	le := binary.LittleEndian
	const headerSize, attrSize = 104, 136
	const recordAuxtrace = 71
	var data []byte
	for cpu := int32(0); int(cpu) < len(streams); cpu++ {
		d := streams[cpu]
		body := make([]byte, 8+40)
		le.PutUint32(body, recordAuxtrace)
		le.PutUint16(body[6:], 48)
		le.PutUint64(body[8:], uint64(len(d)))
		le.PutUint32(body[8+24:], uint32(cpu)) // idx
		le.PutUint32(body[8+28:], 100)         // tid
		le.PutUint32(body[8+32:], uint32(cpu)) // cpu
		data = append(append(data, body...), d...)
	}
	attr := make([]byte, attrSize+16)
	le.PutUint32(attr, 8) // intel_pt's PMU type in the lab
	le.PutUint32(attr[4:], attrSize)
	h := make([]byte, headerSize)
	copy(h, "PERFILE2")
	le.PutUint64(h[8:], headerSize)
	le.PutUint64(h[16:], uint64(len(attr)))
	le.PutUint64(h[24:], headerSize)
	le.PutUint64(h[32:], uint64(len(attr)))
	le.PutUint64(h[40:], uint64(headerSize+len(attr)))
	le.PutUint64(h[48:], uint64(len(data)))
	return append(append(h, attr...), data...)
}

func TestExportPTPerfData(t *testing.T) {
	cpu0 := ptStream(t, intelpt.Packet{Kind: intelpt.KindPSB}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 100},
		intelpt.Packet{Kind: intelpt.KindOVF}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 400})
	cpu1 := ptStream(t, intelpt.Packet{Kind: intelpt.KindPSB}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 200},
		intelpt.Packet{Kind: intelpt.KindTraceStop})
	p := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(p, perfDataPT(map[int32][]byte{0: cpu0, 1: cpu1}), 0o600); err != nil {
		t.Fatal(err)
	}
	clocks := &Clocks{Sources: map[string]SourceClock{"pt": {TSC: &TSCConversion{Mult: 1, Shift: 0}}}}
	st, out := export(t, []string{p}, Options{Clocks: clocks})
	if len(st.Inputs) != 2 || st.Inputs[0].Stream != "cpu 0" || st.Inputs[1].Stream != "cpu 1" || st.Inputs[0].Format != "perf.data (Intel PT)" {
		t.Fatalf("inputs %+v %+v", *st.Inputs[0], *st.Inputs[1])
	}
	tr := decodeTrace(t, out)
	var got []string
	for _, e := range tr.events {
		if e.typ == typeInstant {
			got = append(got, tr.path(e.track)+"@"+strconv.FormatUint(e.ts, 10)+":"+e.name)
		}
	}
	want := "Intel PT perf.data cpu 0@100:overflow Intel PT perf.data cpu 1@200:trace stop"
	if strings.Join(got, " ") != want {
		t.Errorf("instants %q, want %q", strings.Join(got, " "), want)
	}
}

// TestExportPTPerfDataTruncated: a perf.data file cut inside its last
// AUXTRACE record (perf killed, disk full) still gives a timeline: the
// streams up to the cut are decoded, and the cut is reported as loss.
func TestExportPTPerfDataTruncated(t *testing.T) {
	cpu0 := ptStream(t, intelpt.Packet{Kind: intelpt.KindPSB}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 100},
		intelpt.Packet{Kind: intelpt.KindOVF}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 400})
	cpu1 := ptStream(t, intelpt.Packet{Kind: intelpt.KindPSB}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 200},
		intelpt.Packet{Kind: intelpt.KindTraceStop})
	file := perfDataPT(map[int32][]byte{0: cpu0, 1: cpu1})
	p := filepath.Join(t.TempDir(), "perf.data")
	// cut in cpu 1's PSB: its stream has no complete packet left
	if err := os.WriteFile(p, file[:len(file)-len(cpu1)+4], 0o600); err != nil {
		t.Fatal(err)
	}
	clocks := &Clocks{Sources: map[string]SourceClock{"pt": {TSC: &TSCConversion{Mult: 1, Shift: 0}}}}
	st, out := export(t, []string{p}, Options{Clocks: clocks})
	if len(st.Inputs) == 0 || !st.Inputs[0].Truncated || !strings.Contains(st.Inputs[0].Truncation, "truncated") {
		t.Fatalf("inputs %+v: want the first one truncated", st.Inputs)
	}
	if st.Lost() == 0 {
		t.Error("a truncated perf.data counts no loss")
	}
	tr := decodeTrace(t, out)
	var got []string
	for _, e := range tr.events {
		if e.typ == typeInstant {
			got = append(got, tr.path(e.track)+"@"+strconv.FormatUint(e.ts, 10)+":"+e.name)
		}
	}
	if want := "Intel PT perf.data cpu 0@100:overflow"; !strings.HasPrefix(strings.Join(got, " "), want) {
		t.Errorf("instants %q, want %q first", strings.Join(got, " "), want)
	}
}

// withRecords inserts perf records at the start of the data section of a
// perf.data file made by perfDataPT.
func withRecords(file, recs []byte) []byte {
	le := binary.LittleEndian
	off := le.Uint64(file[40:])
	out := append(append(append([]byte{}, file[:off]...), recs...), file[off:]...)
	le.PutUint64(out[48:], le.Uint64(file[48:])+uint64(len(recs)))
	return out
}

// A perf.data file's PERF_RECORD_TIME_CONV converts its TSC values to
// perf time when the clocks file has no TSC conversion.
func TestExportPTPerfDataTimeConv(t *testing.T) {
	cpu0 := ptStream(t, intelpt.Packet{Kind: intelpt.KindPSB}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 100},
		intelpt.Packet{Kind: intelpt.KindOVF}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 400})
	cpu1 := ptStream(t, intelpt.Packet{Kind: intelpt.KindPSB}, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 200},
		intelpt.Packet{Kind: intelpt.KindTraceStop})
	le := binary.LittleEndian
	rec := make([]byte, 8+48)
	le.PutUint32(rec, 79) // PERF_RECORD_TIME_CONV
	le.PutUint16(rec[6:], uint16(len(rec)))
	le.PutUint64(rec[8:], 1)     // time_shift
	le.PutUint64(rec[16:], 3)    // time_mult: ns = 1000 + tsc*3/2
	le.PutUint64(rec[24:], 1000) // time_zero
	p := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(p, withRecords(perfDataPT(map[int32][]byte{0: cpu0, 1: cpu1}), rec), 0o600); err != nil {
		t.Fatal(err)
	}
	// A clocks file that aligns PT (offset 0) but has no TSC conversion.
	clocks := &Clocks{Sources: map[string]SourceClock{"pt": {OffsetNS: 0}}}
	st, out := export(t, []string{p}, Options{Clocks: clocks})
	if len(st.Inputs) != 2 || !strings.HasPrefix(st.Inputs[0].Clock, "perf time") || !strings.HasPrefix(st.Inputs[1].Clock, "perf time") {
		t.Fatalf("inputs %+v %+v", *st.Inputs[0], *st.Inputs[1])
	}
	for _, w := range st.Warnings {
		if strings.Contains(w, "TSC") {
			t.Errorf("warning despite TIME_CONV: %s", w)
		}
	}
	tr := decodeTrace(t, out)
	var got []string
	for _, e := range tr.events {
		if e.typ == typeInstant {
			got = append(got, tr.path(e.track)+"@"+strconv.FormatUint(e.ts, 10)+":"+e.name)
		}
	}
	want := "Intel PT perf.data cpu 0@1150:overflow Intel PT perf.data cpu 1@1300:trace stop"
	if strings.Join(got, " ") != want {
		t.Errorf("instants %q, want %q", strings.Join(got, " "), want)
	}
}

// TestExportPTCaptureDir: a buffer of an 'iotap pt capture' directory is
// put on perf time with the TSC conversion of its capture.json.
func TestExportPTCaptureDir(t *testing.T) {
	psb := intelpt.Packet{Kind: intelpt.KindPSB}
	data := ptStream(t, psb, intelpt.Packet{Kind: intelpt.KindTSC, Payload: 4000}, intelpt.Packet{Kind: intelpt.KindPSBEnd},
		intelpt.Packet{Kind: intelpt.KindTSC, Payload: 8000}, intelpt.Packet{Kind: intelpt.KindTraceStop})
	dir := t.TempDir()
	p := filepath.Join(dir, "cpu1.pt")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ci := &intelpt.CaptureInfo{Tool: "iotap", Mode: "per-cpu", Buffers: []intelpt.CaptureBuffer{{CPU: 1, File: "cpu1.pt"}},
		TSC: &intelpt.TSCConversion{Zero: 1e9, Mult: 1, Shift: 1}} // ns = 1e9 + tsc/2
	if err := intelpt.WriteCaptureInfo(dir, ci); err != nil {
		t.Fatal(err)
	}
	// Two inputs on one clock: the PT buffer and a one-event source at
	// perf time 1e9+1000 ns.
	ev := filepath.Join(dir, "ev.ndjson")
	os.WriteFile(ev, []byte(`{"name":"x","ts":1000001000,"cpu":0,"pid":1,"fields":{}}`+"\n"), 0o600)
	clocks := &Clocks{Sources: map[string]SourceClock{"events": {OffsetNS: 0}, "pt": {OffsetNS: 0}}}
	st, _ := export(t, []string{p, ev}, Options{Clocks: clocks})
	in := st.Inputs[0]
	if !strings.Contains(in.Clock, "capture.json") || in.Warnings != 0 {
		t.Errorf("clock %q, %d warnings: %v", in.Clock, in.Warnings, st.Warnings)
	}
	// TSC 4000 -> 1e9+2000 ns, 8000 -> 1e9+4000; the event at 1e9+1000.
	if e := st.Inputs[1]; e.FirstNS != 1e9+1000 || in.FirstNS != 1e9+2000 || in.LastNS != 1e9+4000 {
		t.Errorf("pt %d..%d, events at %d", in.FirstNS, in.LastNS, e.FirstNS)
	}
	// Without capture.json: TSC ticks as ns and a warning.
	os.Remove(filepath.Join(dir, intelpt.CaptureInfoFile))
	st, _ = export(t, []string{p}, Options{})
	if in := st.Inputs[0]; in.Warnings != 1 || strings.Contains(in.Clock, "capture.json") {
		t.Errorf("without capture.json: clock %q, %d warnings", in.Clock, in.Warnings)
	}
}
