package cut

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/timerange"
)

// ptTimes decodes a PT stream and returns each packet's offset and the
// TimeTracker's time after it (-1 before the first TSC); the packets of a
// PSB+ header before its TSC take that TSC's time, the convention of cut
// (and of libipt's decoder, which reads the whole header before it
// reports a time).
func ptTimes(t *testing.T, b []byte, cfg intelpt.Config) (offs []int64, times []int64, kinds []intelpt.Kind) {
	t.Helper()
	dec := intelpt.NewStreamDecoder(bytes.NewReader(b), cfg, 0)
	tt := intelpt.NewTimeTracker(cfg)
	var p intelpt.Packet
	psb := -1 // index of the PSB whose header's TSC is not seen yet
	for {
		off := dec.Offset()
		err := dec.Next(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		tt.Update(&p)
		ts := int64(-1)
		if v, ok := tt.TSC(); ok {
			ts = int64(v)
		}
		if p.Kind == intelpt.KindPSB {
			psb = len(times)
		}
		if p.Kind == intelpt.KindTSC && psb >= 0 {
			for i := psb; i < len(times); i++ {
				times[i] = ts
			}
			psb = -1
		}
		offs, times, kinds = append(offs, off), append(times, ts), append(kinds, p.Kind)
	}
	return offs, times, kinds
}

// TestCutPTMTCTimes: in a trace whose PSB+ headers carry TSC and TMA and
// whose segments are timed by MTC packets (MTC frequency 0, CPUID 0x15
// ratio 100: an MTC tick is 100 TSC ticks), a cut whose ends fall
// between two MTCs of a segment starts with the segment holding the
// window's first packets, which only the MTC-refined times place there
// (by its TSC alone the whole segment is before the window), and ends
// with the segment holding its last ones. In the cut every packet's time
// (TSC + TMA + MTC) equals the time of the same packet in the uncut
// trace, and every MTC's time equals the one the stream was written
// with: TSC - TMA.fc + 100 × (MTC.ctc - TMA.ctc), the oracle.
func TestCutPTMTCTimes(t *testing.T) {
	const (
		segs, mtcs = 12, 20
		fc         = 7
		ratio      = 100
	)
	cfg := intelpt.Config{MTCFreq: 0, CPUID15EAX: 1, CPUID15EBX: ratio}
	tscOf := func(k int) uint64 { return 1_000_000 + 10_000*uint64(k) }
	mtcTime := func(k, j int) int64 { return int64(tscOf(k)) - fc + ratio*int64(j) }
	var e intelpt.Encoder
	type mtcAt struct {
		off  int
		time int64
	}
	var want []mtcAt
	var psbs []int
	for k := 0; k < segs; k++ {
		psbs = append(psbs, len(e.Bytes()))
		ctc0 := uint64(200 + 13*k) // the CTC wraps at 256 inside some segments
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: tscOf(k)})
		e.Encode(intelpt.Packet{Kind: intelpt.KindTMA, Payload: ctc0, Aux: fc})
		e.Encode(intelpt.Packet{Kind: intelpt.KindCBR, Payload: 20})
		e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x401000})
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		for j := 1; j <= mtcs; j++ {
			e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 4, Payload: 0b1010})
			want = append(want, mtcAt{len(e.Bytes()), mtcTime(k, j)})
			e.Encode(intelpt.Packet{Kind: intelpt.KindMTC, Payload: (ctc0 + uint64(j)) & 0xff})
		}
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	pt := e.Bytes()
	offs, times, kinds := ptTimes(t, pt, cfg)
	timeAt := map[int64]int64{}
	for i, o := range offs {
		timeAt[o] = times[i]
	}
	for _, m := range want {
		if got := timeAt[int64(m.off)]; got != m.time {
			t.Fatalf("uncut: the MTC at %d is timed %d, written at %d", m.off, got, m.time)
		}
	}
	in := Input{Name: "mtc.pt", ReaderAt: bytes.NewReader(pt), Size: int64(len(pt)), PT: &PTTiming{Config: cfg}}
	abs := func(ns int64) string { return "@" + strconv.FormatFloat(float64(ns)/1e9, 'f', 9, 64) }
	for _, c := range []struct {
		from, to   int64 // inside segments, between MTCs
		first, to_ int   // the segments the cut spans: [first, to_)
	}{
		{mtcTime(3, 5) + 1, mtcTime(8, 12) + 1, 3, 9},
		{mtcTime(0, 19) + 1, mtcTime(1, 1), 0, 2},
		{mtcTime(5, 20), mtcTime(6, 0), 5, 6}, // the last MTC of segment 5 to segment 6's TSC
	} {
		spec, err := timerange.ParseSpec(abs(c.from), abs(c.to))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := Cut(context.Background(), in, &out, Options{Window: spec})
		if err != nil {
			t.Fatal(err)
		}
		end := len(pt)
		if c.to_ < segs {
			end = psbs[c.to_]
		}
		if res.InputStart != int64(psbs[c.first]) || res.InputEnd != int64(end) {
			t.Errorf("[%d, %d): cut [%d, %d), want segments %d..%d [%d, %d)", c.from, c.to, res.InputStart, res.InputEnd, c.first, c.to_-1, psbs[c.first], end)
			continue
		}
		// the window's first packet is in the cut's first segment: it
		// starts where the MTC-refined times say, not the TSC
		if int64(tscOf(c.first)) >= c.from || (c.first+1 < segs && int64(tscOf(c.first+1)) <= c.from) {
			t.Errorf("[%d, %d): the window does not start inside segment %d", c.from, c.to, c.first)
		}
		coffs, ctimes, ckinds := ptTimes(t, out.Bytes(), cfg)
		inWin := 0
		for i, o := range coffs {
			orig := o + res.InputStart
			if ctimes[i] != timeAt[orig] {
				t.Errorf("[%d, %d): the %v at %d of the cut is timed %d, at %d in the uncut trace %d", c.from, c.to, ckinds[i], o, ctimes[i], orig, timeAt[orig])
			}
			if ctimes[i] >= c.from && ctimes[i] < c.to {
				inWin++
			}
		}
		// every packet of the uncut trace inside the window is in the cut
		for i, o := range offs {
			if times[i] >= c.from && times[i] < c.to && (o < res.InputStart || o >= res.InputEnd) {
				t.Errorf("[%d, %d): the %v at %d (time %d) is in the window, not in the cut", c.from, c.to, kinds[i], o, times[i])
			}
		}
		if inWin == 0 {
			t.Errorf("[%d, %d): no packet of the cut in the window", c.from, c.to)
		}
	}
}
