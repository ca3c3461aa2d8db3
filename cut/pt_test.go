package cut

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/timerange"
)

// ptSegments encodes a PT stream of PSB segments, the k-th with the TSC
// tscs[k] in its PSB+ and a few TNT packets, and an overflow in segment
// ovfIn; it returns the stream and the offset of each PSB.
func ptSegments(t testing.TB, tscs []uint64, ovfIn int) ([]byte, []int) {
	t.Helper()
	var e intelpt.Encoder
	var offs []int
	for k, tsc := range tscs {
		offs = append(offs, len(e.Bytes()))
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: tsc})
		e.Encode(intelpt.Packet{Kind: intelpt.KindCBR, Payload: 20})
		e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x401000})
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		for i := 0; i < 3; i++ {
			e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 4, Payload: 0b1010})
		}
		if k == ovfIn {
			e.Encode(intelpt.Packet{Kind: intelpt.KindOVF})
			e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x402000})
		}
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	return e.Bytes(), offs
}

// TestCutPTSegments: a cut of a raw PT stream is the run of PSB segments
// that the window touches, byte for byte; an overflow inside it is
// counted as loss, one outside is not; a window after the end is an empty
// stream; a perf.data file is refused with a message saying what is cut.
func TestCutPTSegments(t *testing.T) {
	tscs := []uint64{1000, 2000, 3000, 4000, 5000, 6000}
	pt, offs := ptSegments(t, tscs, 3)
	path := filepath.Join(t.TempDir(), "cpu0.pt")
	if err := os.WriteFile(path, pt, 0o600); err != nil {
		t.Fatal(err)
	}
	end := len(pt)
	for _, c := range []struct {
		from, to   string
		start, end int
		lost       uint64
	}{
		{"", "", 0, end, 1},
		{"@0.000002", "@0.000004", offs[1], offs[3], 0},   // [2000, 4000): segments 1 and 2
		{"@0.0000025", "@0.0000045", offs[2], offs[4], 1}, // 2500 is in segment 2, 4500 in 3 (the overflow)
		{"0.000003", "+0.000000001", offs[3], offs[4], 1}, // relative to the first time (1000): [4000, 4001)
		{"@0.000005", "", offs[4], end, 0},                // to the end
		{"", "@0.000001", 0, 0, 0},                        // before the first packet: empty
		{"@0.000007", "@0.000008", 0, 0, 0},               // after the end: empty
		{"@0.0000061", "", 0, 0, 0},                       // after the last time: empty
	} {
		spec, err := timerange.ParseSpec(c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		in, closer, err := OpenFile(path, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := Cut(context.Background(), in, &out, Options{Window: spec})
		closer.Close()
		if err != nil {
			t.Fatalf("%s..%s: %v", c.from, c.to, err)
		}
		want := pt[c.start:c.end]
		if c.start == c.end {
			want = EmptyPT
		}
		if !bytes.Equal(out.Bytes(), want) || res.Lost != c.lost {
			t.Errorf("%s..%s: cut [%d, %d) %d bytes, lost %d; want [%d, %d), lost %d", c.from, c.to,
				res.InputStart, res.InputEnd, out.Len(), res.Lost, c.start, c.end, c.lost)
		}
	}
	// a buffer of an 'iotap pt capture' directory is timed with its
	// capture.json's TSC conversion: ns = 2 * tsc here
	capDir := t.TempDir()
	capPath := filepath.Join(capDir, "cpu0.pt")
	os.WriteFile(capPath, pt, 0o600)
	ci := &intelpt.CaptureInfo{Tool: "iotap", Mode: "per-cpu", Buffers: []intelpt.CaptureBuffer{{CPU: 0, File: "cpu0.pt"}},
		TSC: &intelpt.TSCConversion{Mult: 2}}
	if err := intelpt.WriteCaptureInfo(capDir, ci); err != nil {
		t.Fatal(err)
	}
	cin, ccloser, err := OpenFile(capPath, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := timerange.ParseSpec("@0.000004", "@0.000008") // TSC [2000, 4000)
	var cout bytes.Buffer
	cres, err := Cut(context.Background(), cin, &cout, Options{Window: spec})
	ccloser.Close()
	if err != nil || !bytes.Equal(cout.Bytes(), pt[offs[1]:offs[3]]) || cres.Start != 2000 {
		t.Errorf("capture directory buffer: %v, cut [%d, %d), start %d; want [%d, %d), start 2000 ns", err, cres.InputStart, cres.InputEnd, cres.Start, offs[1], offs[3])
	}

	// the empty stream decodes: a PSB and a PSBEND
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	if !bytes.Equal(e.Bytes(), EmptyPT) {
		t.Errorf("EmptyPT is %x, a PSB and PSBEND are %x", EmptyPT, e.Bytes())
	}
	if _, err := Sniff([]byte("PERFILE2\x68\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), false); err == nil {
		t.Error("perf.data accepted")
	}
	in, closer, _ := OpenFile(path, false, nil)
	defer closer.Close()
	if _, err := BuildIndex(context.Background(), in, 0); err == nil {
		t.Error("PT indexed")
	}
	spec, _ = timerange.ParseSpec("mark:x", "")
	if _, err := Cut(context.Background(), in, &bytes.Buffer{}, Options{Window: spec}); err == nil {
		t.Error("mark: accepted for PT")
	}
}

// TestCutPTUntimed: a trace without a TSC has no time, so no window can
// be placed in it: a window is a *WindowError, where the cut was an empty
// stream, exit 0, the trace's packets (an overflow too) silently left
// out; without a window the trace is copied whole.
func TestCutPTUntimed(t *testing.T) {
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x401000})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 4, Payload: 0b1010})
	e.Encode(intelpt.Packet{Kind: intelpt.KindOVF})
	e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x402000})
	pt := e.Bytes()
	for _, c := range [][2]string{{"0", ""}, {"", "+1s"}, {"@0.000001", "@1"}, {"", ""}} {
		spec, err := timerange.ParseSpec(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, err := Cut(context.Background(), Input{Name: "untimed.pt", ReaderAt: bytes.NewReader(pt), Size: int64(len(pt))}, &out, Options{Window: spec})
		if !spec.Set() {
			if err != nil || !bytes.Equal(out.Bytes(), pt) || res.Lost != 1 {
				t.Errorf("no window: %v, %d of %d bytes, lost %d", err, out.Len(), len(pt), res.Lost)
			}
			continue
		}
		var we *WindowError
		if !errors.As(err, &we) || !strings.Contains(err.Error(), "untimed.pt") {
			t.Errorf("%s..%s: %v, %d bytes written, want a *WindowError naming the trace", c[0], c[1], err, out.Len())
		}
	}
}
