package intelpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDumpInput: a perf.data's streams each after their "# cpu N" line
// (cpu 3's OVF counted as its loss), one CPU selected, none; a raw trace cut inside its last packet is named
// with the bytes left undecoded (ovf.pt is PSB, PSBEND, OVF: cut one byte
// into the 2-byte OVF, 1 byte); perf's loss is carried.
func TestDumpInput(t *testing.T) {
	b, err := os.ReadFile("testdata/libipt/two-cpus.perf.data")
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseInput(b)
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	sum, err := DumpInput(&w, in, in.Config(), DumpOptions{}, DumpInputOptions{File: "x", CPU: -1})
	if err != nil || sum.Streams != 2 || sum.Errors != 0 || !slices.Equal(sum.Loss(), []string{"cpu 3: 1 overflow(s)"}) {
		t.Fatalf("%+v, %v", sum, err) // cpu 3's OVF is its loss
	}
	want := "# cpu 0: 35 bytes\n0000000000000000  psb\n0000000000000010  tsc        1000\n0000000000000018  psbend\n000000000000001a  fup        6: 0000000000401000\n" +
		"# cpu 3: 20 bytes\n0000000000000000  psb\n0000000000000010  psbend\n0000000000000012  ovf\n"
	if w.String() != want {
		t.Errorf("listing:\n%s\nwant\n%s", w.String(), want)
	}
	w.Reset()
	if sum, _ := DumpInput(&w, in, in.Config(), DumpOptions{}, DumpInputOptions{CPU: 3, JSON: true}); sum.Streams != 1 || strings.Count(w.String(), "\n") != 4 || !strings.Contains(w.String(), `"cpu":3`) {
		t.Errorf("cpu 3 as NDJSON: %+v\n%s", sum, w.String())
	}
	if sum, _ := DumpInput(&w, in, in.Config(), DumpOptions{}, DumpInputOptions{CPU: 5}); sum.Streams != 0 {
		t.Errorf("cpu 5: %+v", sum)
	}

	raw, _ := os.ReadFile("testdata/libipt/ovf.pt")
	cut, err := ParseInput(raw[:len(raw)-1])
	if err != nil {
		t.Fatal(err)
	}
	sum, _ = DumpInput(&w, cut, Config{}, DumpOptions{}, DumpInputOptions{File: "ovf.pt", CPU: -1})
	if want := []string{"trace ends inside a packet ([ovf.pt: last 1 bytes])"}; !slices.Equal(sum.Loss(), want) {
		t.Errorf("loss %q, want %q", sum.Loss(), want)
	}
}

// TestInputStats: the statistics of each stream and their loss: ovf.pt's
// overflow, a cut tail (named with its packet's offset, as pt flow and pt
// calls name it), perf's loss records; the text and NDJSON forms.
func TestInputStats(t *testing.T) {
	raw, _ := os.ReadFile("testdata/libipt/ovf.pt")
	in, _ := ParseInput(raw[:len(raw)-1])
	items := InputStats(in, "cut.pt", Config{})
	if len(items) != 1 || items[0].Name != "cut.pt" || items[0].Stats.Packets != 2 || !items[0].Stats.Truncated {
		t.Fatalf("%+v", items)
	}
	in, _ = ParseInput(raw)
	items = append(items, InputStats(in, "ovf.pt", Config{})...)
	// ptdump lists ovf.pt as psb at 0, psbend at 0x10, ovf at 0x12 (20
	// bytes): its last byte gone, the trace ends inside the ovf.
	if got, want := StatsLoss(items, nil), []string{"cut.pt: trace ends inside a packet at offset 0x12 (last 1 bytes)", "ovf.pt: 1 overflow(s)"}; !slices.Equal(got, want) {
		t.Errorf("loss %q, want %q", got, want)
	}
	var w bytes.Buffer
	WriteStats(&w, "ovf.pt", items[1:], nil, false)
	for _, line := range []string{"trace          ovf.pt\n", "packets        3\n", "overflows      1\n", "  ovf          1\n"} {
		if !strings.Contains(w.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, w.String())
		}
	}
	w.Reset()
	WriteStats(&w, "ovf.pt", items, nil, true)
	if lines := strings.Split(strings.TrimSpace(w.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[0], `"kind":"input"`) {
		t.Errorf("NDJSON:\n%s", w.String())
	}
}

// TestComputeStreamStats: the streamed statistics equal ComputeStats on
// the whole; segments only from ParallelStatsMin bytes and two workers;
// a cancelled context stops the reading.
func TestComputeStreamStats(t *testing.T) {
	raw, _ := os.ReadFile("testdata/libipt/dump-all-packets.pt")
	s, err := ComputeStreamStats(context.Background(), bytes.NewReader(raw), bytes.NewReader(raw), int64(len(raw)), Config{}, 4)
	if want := ComputeStats(raw, Config{}); err != nil || s.Packets != want.Packets || s.Bytes != want.Bytes {
		t.Errorf("%+v, %v; want %+v", s, err, want)
	}
	for _, tc := range []struct {
		size    int64
		workers int
		want    int
	}{{ParallelStatsMin, 4, 4}, {ParallelStatsMin - 1, 4, 1}, {-1, 4, 1}, {ParallelStatsMin, 1, 1}} {
		if got := StatsWorkers(tc.size, tc.workers); got != tc.want {
			t.Errorf("StatsWorkers(%d, %d) = %d, want %d", tc.size, tc.workers, got, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ComputeStreamStats(ctx, bytes.NewReader(raw), nil, -1, Config{}, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestDumpSkipped: the bytes the listings skip after decoding errors, the
// errors and the first one's offset are those the statistics count
// (stats.go decodes on its own; a PSB may start inside the bad packet,
// before the error's offset), over traces of PSBs between random bytes, in each of Dump, DumpReader, DumpJSON and DumpJSONReader.
func TestDumpSkipped(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 200; i++ {
		var b []byte
		for j := 0; j < 1+r.IntN(3); j++ {
			b = append(b, psbPattern...)
			b = append(b, 0x02, 0x23)
			for k := r.IntN(300); k > 0; k-- {
				b = append(b, byte(r.Uint32()))
			}
		}
		st := ComputeStats(b, Config{})
		for name, res := range map[string]DumpResult{
			"Dump":           must(Dump(io.Discard, b, Config{}, DumpOptions{})),
			"DumpReader":     must(DumpReader(io.Discard, bytes.NewReader(b), 0, Config{}, DumpOptions{})),
			"DumpJSON":       must(DumpJSON(io.Discard, b, Config{}, DumpOptions{})),
			"DumpJSONReader": must(DumpJSONReader(io.Discard, bytes.NewReader(b), 0, Config{}, DumpOptions{})),
		} {
			if res.Errors != st.Errors || res.Skipped != st.SkippedBytes || res.Loss() != st.Loss() {
				t.Fatalf("trace %d, %s: %d errors, %d skipped (truncated %v, tail %d), %q; stats: %d, %d, %q, truncated %v", i, name, res.Errors, res.Skipped, res.Truncated, res.SkippedTail, res.Loss(), st.Errors, st.SkippedBytes, st.Loss(), st.Truncated)
			}
		}
	}
}

func must(r DumpResult, err error) DumpResult {
	if err != nil {
		panic(err)
	}
	return r
}

// TestDumpStream: a raw trace read as it comes lists exactly what
// DumpInput lists of it loaded (text and NDJSON); its losses are said
// once each (decoding errors resynchronised, a cut tail with its bytes);
// no PSB is ErrNoPSB unless NoSync; a cancelled ctx stops the reading.
func TestDumpStream(t *testing.T) {
	raw, err := os.ReadFile("testdata/libipt/dump-all-packets.pt")
	if err != nil {
		t.Fatal(err)
	}
	in, _ := ParseInput(raw)
	for _, asJSON := range []bool{false, true} {
		var a, b bytes.Buffer
		o := DumpInputOptions{File: "t.pt", JSON: asJSON, CPU: -1}
		sa, err := DumpStream(context.Background(), &a, bytes.NewReader(raw), Config{}, DumpOptions{LastIP: true}, o)
		if err != nil {
			t.Fatal(err)
		}
		sb, _ := DumpInput(&b, in, Config{}, DumpOptions{LastIP: true}, o)
		if a.String() != b.String() || sa.Streams != 1 || len(sa.Loss()) != len(sb.Loss()) {
			t.Errorf("json %v: streamed listing or loss differs from DumpInput's: %q / %q", asJSON, sa.Loss(), sb.Loss())
		}
	}
	ovf, _ := os.ReadFile("testdata/libipt/ovf.pt")
	sum, err := DumpStream(context.Background(), io.Discard, bytes.NewReader(ovf[:len(ovf)-1]), Config{}, DumpOptions{}, DumpInputOptions{})
	if want := []string{"trace ends inside a packet (last 1 bytes)"}; err != nil || !slices.Equal(sum.Loss(), want) {
		t.Errorf("cut tail: %q, %v; want %q", sum.Loss(), err, want)
	}
	// A PSB, an unknown opcode, a PSB: one decoding error, resynchronised.
	var enc Encoder
	enc.Encode(Packet{Kind: KindPSB})
	enc.Encode(Packet{Kind: KindPSBEnd})
	noisy := append(enc.Bytes(), 0x02, 0xff)
	noisy = append(noisy, enc.Bytes()...)
	sum, _ = DumpStream(context.Background(), io.Discard, bytes.NewReader(noisy), Config{}, DumpOptions{}, DumpInputOptions{})
	var res DumpResult
	res, _ = Dump(io.Discard, noisy, Config{}, DumpOptions{})
	if l := sum.Loss(); len(l) == 0 || !strings.HasPrefix(l[0], res.Loss()) || !strings.Contains(l[0], "resynchronised at the next PSB (see the listing)") {
		t.Errorf("errors: %q (Dump: %q)", l, res.Loss())
	}
	if _, err := DumpStream(context.Background(), io.Discard, strings.NewReader("not a trace"), Config{}, DumpOptions{}, DumpInputOptions{}); !errors.Is(err, ErrNoPSB) || !strings.HasSuffix(err.Error(), "no PSB in 11 bytes") {
		t.Errorf("no PSB: %v", err)
	}
	if _, err := DumpStream(context.Background(), io.Discard, strings.NewReader("not a trace"), Config{}, DumpOptions{NoSync: true}, DumpInputOptions{}); err != nil {
		t.Errorf("no PSB, NoSync: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DumpStream(ctx, io.Discard, bytes.NewReader(raw), Config{}, DumpOptions{}, DumpInputOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestFlowLoss: what pt flow says a listing lacks: ovf.pt's overflow;
// a decoding error resynchronised at the next PSB, as ComputeStats
// counts it; nothing for a clean trace.
func TestFlowLoss(t *testing.T) {
	ovf, _ := os.ReadFile("testdata/libipt/ovf.pt")
	if got, want := FlowLoss(ovf, Config{}), []string{"1 overflow(s) (see the listing)"}; !slices.Equal(got, want) {
		t.Errorf("ovf.pt: %q, want %q", got, want)
	}
	var enc Encoder
	enc.Encode(Packet{Kind: KindPSB})
	enc.Encode(Packet{Kind: KindPSBEnd})
	clean := enc.Bytes()
	if got := FlowLoss(clean, Config{}); len(got) != 0 {
		t.Errorf("clean: %q", got)
	}
	noisy := append(append(append([]byte(nil), clean...), 0x02, 0xff), clean...)
	st := ComputeStats(noisy, Config{})
	if got, want := FlowLoss(noisy, Config{}), []string{st.Loss() + ", decoding resumed at the next PSB (see the listing)"}; st.Errors != 1 || !slices.Equal(got, want) {
		t.Errorf("noisy: %q, want %q (%d errors)", got, want, st.Errors)
	}
	// Bytes without a PSB (random, or a compressed trace): nothing is
	// decoded, which is said (the listing, as ptxed's, is empty).
	junk := bytes.Repeat([]byte{0x5a, 0xa5, 0x13}, 1000)
	if got, want := FlowLoss(junk, Config{}), []string{"not an Intel PT trace: no PSB in 3000 bytes, nothing decoded"}; !slices.Equal(got, want) {
		t.Errorf("junk: %q, want %q", got, want)
	}
	if got := FlowLoss(nil, Config{}); len(got) != 0 {
		t.Errorf("empty trace: %q", got)
	}
}

// TestNewImageFiles: raw code at its address, an ELF's loadable segments
// at their addresses, both in one image; a raw file without an address
// is an error.
func TestNewImageFiles(t *testing.T) {
	raw, err := os.ReadFile("testdata/libipt/call_direct-ret_compressed.bin")
	if err != nil {
		t.Fatal(err)
	}
	im, err := NewImageFiles([]string{"testdata/libipt/call_direct-ret_compressed.bin:0x100000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, len(raw))
	if n := im.Read(b, 0x100000, ASID{AnyASID, AnyASID}); n != len(raw) || !bytes.Equal(b, raw) {
		t.Errorf("raw at 0x100000: %d bytes", n)
	}
	if _, err := NewImageFiles([]string{"testdata/libipt/call_direct-ret_compressed.bin"}, nil); err == nil {
		t.Errorf("raw without an address: no error")
	}
	if _, err := NewImageFiles(nil, []string{"testdata/libipt/nosuch.elf"}); err == nil {
		t.Errorf("missing ELF: no error")
	}
}

// TestFlowLossTruncatedTail: a trace cut inside a packet is loss for pt
// flow (the listing, as ptxed's, does not show it), named with the
// offset of the packet cut. The oracle is libipt's ptdump: its expected
// listings of the corpus give the packet boundaries. For each corpus
// trace that pt flow finds nothing lost in, every cut after its first
// PSB that is not at a boundary must be reported at the packet that
// holds it, and a cut at a boundary must not be reported. Then a
// 256 KiB trace cut at 200 random points, checked against pt dump's
// decoder (DumpResult.Truncated, SkippedTail). Last, the 20-byte trace of
// the review: cbr-tsc-tma-mtc-cyc's PSB, then 4 bytes of its TSC.
func TestFlowLossTruncatedTail(t *testing.T) {
	traces, cuts := 0, 0
	for _, ct := range loadManifest(t) {
		if len(ct.args) > 0 {
			continue // ptdump options that hide packets, a CPU's errata
		}
		trace, err := os.ReadFile(filepath.Join(corpusDir, ct.name+".pt"))
		exp, err2 := os.ReadFile(filepath.Join(corpusDir, ct.name+"-ptdump.exp"))
		if err != nil || err2 != nil || len(FlowLoss(trace, Config{})) > 0 {
			continue
		}
		var starts []int64 // packet offsets, as ptdump lists them
		psb := -1
		for _, l := range strings.Split(string(exp), "\n") {
			if f := strings.Fields(l); len(f) > 1 && len(f[0]) == 16 {
				if off, err := strconv.ParseInt(f[0], 16, 64); err == nil {
					if f[1] == "psb" && psb < 0 {
						psb = len(starts)
					}
					starts = append(starts, off)
				}
			}
		}
		if psb < 0 || psb+1 >= len(starts) {
			continue
		}
		traces++
		starts = append(starts, int64(len(trace)))
		for cut := starts[psb+1]; cut < int64(len(trace)); cut++ {
			var want []string
			if i, found := slices.BinarySearch(starts, cut); !found {
				p := starts[i-1]
				want = []string{fmt.Sprintf("trace ends inside a packet at offset %#x (last %d bytes)", p, cut-p)}
				cuts++
			}
			if got := FlowLoss(trace[:cut], Config{}); !slices.Equal(got, want) {
				t.Errorf("%s cut at %#x: %q, want %q", ct.name, cut, got, want)
			}
		}
	}
	t.Logf("%d traces, %d cuts inside a packet", traces, cuts)
	if traces < 100 || cuts < 1000 {
		t.Fatalf("%d traces, %d cuts inside a packet: the corpus is not all there", traces, cuts)
	}
	// A longer run, cut at random points: the packet cut is where pt
	// dump's decoder says the tail it did not list starts.
	long := realisticTrace(256<<10, 9)
	r := rand.New(rand.NewPCG(9, 1))
	truncated := 0
	for range 200 {
		cut := long[:len(long)/2+r.IntN(len(long)/2)]
		res, _ := Dump(io.Discard, cut, Config{}, DumpOptions{})
		var got []string
		for _, l := range FlowLoss(cut, Config{}) {
			if strings.Contains(l, "inside a packet") {
				got = append(got, l)
			}
		}
		var want []string
		if res.Truncated {
			truncated++
			p := int64(len(cut)) - res.SkippedTail
			want = []string{fmt.Sprintf("trace ends inside a packet at offset %#x (last %d bytes)", p, res.SkippedTail)}
		}
		if !slices.Equal(got, want) {
			t.Errorf("realistic trace cut at %#x: %q, want %q", len(cut), got, want)
		}
	}
	if truncated < 50 {
		t.Errorf("%d of 200 cuts inside a packet", truncated)
	}
	tsc, err := os.ReadFile(filepath.Join(corpusDir, "cbr-tsc-tma-mtc-cyc.pt"))
	if err != nil {
		t.Fatal(err)
	}
	trunc := append(append([]byte(nil), tsc[:16]...), tsc[0x16:0x16+4]...) // ptdump: psb at 0, tsc at 0x16
	if got, want := FlowLoss(trunc, Config{}), []string{"trace ends inside a packet at offset 0x10 (last 4 bytes)"}; !slices.Equal(got, want) {
		t.Errorf("PSB and part of a TSC: %q, want %q", got, want)
	}
}
