package intelpt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// statsByNext is computeStatsSeg as it was before its counting loop:
// every packet through StreamDecoder.Next. It is the reference the
// counting loop is checked against.
func statsByNext(d *StreamDecoder, rec *timingLog) (Stats, statsSeg) {
	size := d.end
	var s Stats
	seg := statsSeg{firstPSB: -1, lastPSB: -1}
	if d.SyncForward() != nil {
		s.SkippedBytes = size()
		s.Bytes = size()
		return s, seg
	}
	s.SkippedBytes = d.Offset()
	var p Packet
	tm := NewTimeTracker(d.d.cfg)
	lastPSB := int64(-1)
	var gapSum int64
	note := func() {
		if tsc, ok := tm.TSC(); ok {
			if !s.HaveTime {
				s.HaveTime, s.FirstTSC = true, tsc
			}
			s.LastTSC = max(s.LastTSC, tsc)
		}
	}
	for {
		off := d.Offset()
		err := d.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, ErrTruncated) {
				s.Truncated, s.TruncatedAt = true, off
				s.SkippedBytes += size() - off
				break
			}
			s.Errors++
			if len(s.ErrorOffsets) < maxErrorOffsets {
				s.ErrorOffsets = append(s.ErrorOffsets, off)
			}
			if d.SyncForward() != nil {
				s.SkippedBytes += size() - off
				if rec != nil {
					rec.reset()
				}
				break
			}
			s.SkippedBytes += max(d.Offset()-off, 0)
			if rec != nil {
				rec.reset()
			} else {
				tm.Reset()
			}
			continue
		}
		s.Packets++
		s.ByKind[p.Kind]++
		switch p.Kind {
		case KindPSB:
			if lastPSB >= 0 {
				g := off - lastPSB
				if s.PSBs == 1 || g < s.PSBGapMin {
					s.PSBGapMin = g
				}
				s.PSBGapMax = max(s.PSBGapMax, g)
				gapSum += g
			} else {
				seg.firstPSB = off
			}
			lastPSB = off
			s.PSBs++
		case KindOVF:
			s.Overflows++
		}
		if rec != nil {
			if timingKind[p.Kind] {
				rec.add(&p)
			}
		} else if tm.Update(&p) {
			note()
		}
	}
	if s.PSBs > 1 {
		s.PSBGapMean = gapSum / (s.PSBs - 1)
	}
	s.Bytes = size()
	seg.lastPSB, seg.gapSum = lastPSB, gapSum
	return s, seg
}

// statsConfigs are the configurations the comparisons run with: none,
// timing known (MTC, CYC calibration), and errata that change decoding.
var statsConfigs = []Config{
	{},
	{MTCFreq: 2, NomFreq: 4, CPUID15EAX: 1, CPUID15EBX: 3},
	{MTCFreq: 3, CPUID15EAX: 2, CPUID15EBX: 7, Errata: Errata{SKD007: true, SKZ84: true, SKL168: true}},
}

// checkStatsFast compares computeStatsSeg with statsByNext on buf, read
// through windows of the given size from a reader returning half of
// what is asked, with and without a timing log.
func checkStatsFast(t testing.TB, name string, buf []byte, window int) {
	t.Helper()
	for ci, cfg := range statsConfigs {
		for _, logged := range []bool{false, true} {
			var recA, recB *timingLog
			if logged {
				recA, recB = &timingLog{}, &timingLog{}
			}
			a, segA := computeStatsSeg(newStreamDecoder(iotest.HalfReader(bytes.NewReader(buf)), cfg, window), recA)
			b, segB := statsByNext(newStreamDecoder(iotest.HalfReader(bytes.NewReader(buf)), cfg, window), recB)
			if !reflect.DeepEqual(a, b) || segA != segB {
				t.Fatalf("%s (config %d, window %d, log %v): counting loop\n%+v %+v\nNext loop\n%+v %+v", name, ci, window, logged, a, segA, b, segB)
			}
			if logged && !bytes.Equal(recA.b, recB.b) {
				t.Fatalf("%s (config %d, window %d): timing logs differ (%d and %d bytes)", name, ci, window, len(recA.b), len(recB.b))
			}
		}
		// The whole-slice path (ComputeStats) too.
		a, _ := computeStatsSeg(streamOver(buf, cfg), nil)
		b, _ := statsByNext(streamOver(buf, cfg), nil)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s (config %d, whole slice): counting loop\n%+v\nNext loop\n%+v", name, ci, a, b)
		}
	}
}

// damage returns copies of buf with bytes overwritten, cut short, and
// garbage spliced in.
func damage(r *rand.Rand, buf []byte, n int) [][]byte {
	var out [][]byte
	for i := 0; i < n; i++ {
		c := bytes.Clone(buf)
		switch i % 3 {
		case 0:
			for k := 1 + r.IntN(8); k > 0; k-- {
				c[r.IntN(len(c))] = byte(r.Uint32())
			}
		case 1:
			c = c[:r.IntN(len(c))]
		default:
			at := r.IntN(len(c))
			g := make([]byte, 1+r.IntN(40))
			for j := range g {
				g[j] = byte(r.Uint32())
			}
			c = append(append(append([]byte{}, c[:at]...), g...), c[at:]...)
		}
		out = append(out, c)
	}
	return out
}

// TestStatsFastMatchesNext checks the statistics' counting loop against
// a loop calling Next for every packet (statsByNext): on realistic
// traces, random packet streams (block packets included), libipt's test
// corpus when present, and damaged copies of each, through windows from
// a few packets to 1 MiB.
func TestStatsFastMatchesNext(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 1))
	inputs := map[string][]byte{"realistic": realisticTrace(64<<10, 7)}
	// Cut at every length near a packet's end: a fixed-layout packet
	// whose payload runs past the end must not be counted.
	tail := realisticTrace(2<<10, 8)
	for n := len(tail) - 48; n <= len(tail); n++ {
		checkStatsFast(t, fmt.Sprintf("cut at %d", n), tail[:n], 70)
	}
	var full Encoder
	full.Encode(Packet{Kind: KindPSB})
	full.Encode(Packet{Kind: KindPSBEnd})
	for i := 0; i < 40; i++ {
		full.Encode(Packet{Kind: KindTIP, IPC: IPCFull, Payload: 0x1122334455667788 + uint64(i)})
		full.Encode(Packet{Kind: KindMTC, Payload: uint64(i)})
	}
	// CYC calibration from the TSCs of PSB+ (no MTC): the cycles
	// counted between them set the ratio that later CYCs advance the
	// time by.
	var cal Encoder
	for i := 0; i < 6; i++ {
		cal.Encode(Packet{Kind: KindPSB})
		cal.Encode(Packet{Kind: KindTSC, Payload: 1000 + 3000*uint64(i)})
		cal.Encode(Packet{Kind: KindPSBEnd})
		for j := 0; j < 40; j++ {
			cal.Encode(Packet{Kind: KindCYC, Payload: 25})
			cal.Encode(Packet{Kind: KindTNT8, Bits: 2, Payload: 1})
		}
	}
	checkStatsFast(t, "cyc calibration", cal.Bytes(), 1<<20)
	if s := ComputeStats(cal.Bytes(), Config{}); s.LastTSC <= 1000+3000*5 {
		t.Fatalf("cyc calibration: last TSC %d: the CYCs after the last TSC did not count", s.LastTSC)
	}
	// Packets the counting loop must leave to Next: a TNT-64 without
	// bits, MODE of a reserved leaf, PTW of a reserved size, each
	// between packets it counts.
	bad := []byte{0x02, 0xa3, 0, 0, 0, 0, 0, 0}
	for _, b := range [][]byte{bad, {0x99, 0x40}, {0x02, 0x52, 1, 2, 3, 4}, {0x02, 0xf2, 1, 2, 3, 4}} {
		full.Encode(Packet{Kind: KindTNT8, Bits: 3, Payload: 5})
		full.buf = append(full.buf, b...)
		full.Encode(Packet{Kind: KindPSB})
		full.Encode(Packet{Kind: KindTNT64, Bits: 40, Payload: 1 << 39})
		full.Encode(Packet{Kind: KindPTW, Bits: 1, Payload: 7})
		full.Encode(Packet{Kind: KindTSC, Payload: 99})
	}
	for n := 0; n <= len(full.Bytes()); n++ {
		checkStatsFast(t, fmt.Sprintf("full IPs cut at %d", n), full.Bytes()[:n], 64)
	}
	for i := 0; i < 6; i++ {
		buf, _ := randomStream(r, 3000, i%2 == 0)
		inputs[fmt.Sprintf("random%d", i)] = bytes.Clone(buf)
	}
	if pts, _ := filepath.Glob(filepath.Join(corpusDir, "*.pt")); len(pts) > 0 {
		for _, p := range pts {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			inputs["corpus "+filepath.Base(p)] = b
		}
	} else {
		t.Logf("libipt corpus not available in %s: generated traces only", corpusDir)
	}
	windows := []int{70, 4096, 1 << 20}
	for name, buf := range inputs {
		if len(buf) == 0 {
			continue
		}
		for _, w := range windows {
			checkStatsFast(t, name, buf, w)
		}
		n := 3
		if !strings.HasPrefix(name, "corpus") {
			n = 12
		}
		for i, c := range damage(r, buf, n) {
			checkStatsFast(t, fmt.Sprintf("%s damaged %d", name, i), c, windows[i%len(windows)])
		}
	}
}

// FuzzStatsFastMatchesNext checks the counting loop against statsByNext
// on arbitrary bytes, alone and spliced into a realistic trace, through
// a window of 64 to 319 bytes.
func FuzzStatsFastMatchesNext(f *testing.F) {
	f.Add([]byte{0x59, 0x12, 0x03, 0x02, 0xa3, 1, 2, 3, 4, 5, 6}, uint8(0), uint16(100))
	f.Add(bytes.Repeat([]byte{0x02, 0x82}, 8), uint8(40), uint16(4000))
	f.Add([]byte{0x02, 0x63, 0x80, 0x04, 1, 2, 3, 4, 0x02, 0x33}, uint8(9), uint16(0))
	f.Add([]byte{0xa3, 0x07, 0x02, 0xf3, 0x4d}, uint8(200), uint16(9000))
	base := realisticTrace(2<<10, 3)
	f.Fuzz(func(t *testing.T, data []byte, w uint8, at uint16) {
		window := 64 + int(w)
		checkStatsFast(t, "alone", data, window)
		k := int(at) % (len(base) + 1)
		in := append(append(append([]byte{}, base[:k]...), data...), base[k:]...)
		checkStatsFast(t, "spliced", in, window)
	})
}
