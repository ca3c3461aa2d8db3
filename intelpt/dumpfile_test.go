package intelpt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// checkDumpFile compares DumpFile's listing of buf, cut in segments of
// segSize bytes and listed by workers goroutines, and its result with
// one pass of DumpReader (the oracle: the streaming dumper the CLI used,
// itself checked against libipt's ptdump).
func checkDumpFile(t *testing.T, buf []byte, cfg Config, opt DumpOptions, segSize int64, workers int) {
	t.Helper()
	var want, got bytes.Buffer
	wr, err := DumpReader(&want, iotest.HalfReader(bytes.NewReader(buf)), 0, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := dumpFile(&got, bytes.NewReader(buf), int64(len(buf)), cfg, opt, workers, segSize)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) || gr != wr {
		g, w := got.String(), want.String()
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		lo := max(i-300, 0)
		t.Fatalf("%d bytes, segments of %d, %d workers, %+v: result %+v, want %+v; listings differ at byte %d:\n got %q\nwant %q",
			len(buf), segSize, workers, opt, gr, wr, i, g[lo:min(i+200, len(g))], w[lo:min(i+200, len(w))])
	}
}

// TestDumpFileMatchesReader lists realistic traces (PSB+ every 4 KiB)
// that are clean, corrupted at random bytes (decoding errors and
// resyncs inside segments and across cuts), cut short (a truncated last
// packet) or preceded by garbage, with segments from a few bytes to many
// PSBs long and the options segments allow.
func TestDumpFileMatchesReader(t *testing.T) {
	base := realisticTrace(200<<10, 7)
	opts := []DumpOptions{{}, {Raw: true, NoPad: true}, {NoOffset: true, NoTiming: true}, {Quiet: true}, {CPU: &CPU{Family: 6, Model: 0x4e}, NoCyc: true}, {Blocks: true, ExecMode: true}}
	if cuts, _ := psbCuts(bytes.NewReader(base), int64(len(base)), Config{}, 4096); len(cuts) < 40 {
		t.Fatalf("%d cuts in %d bytes, want segments", len(cuts), len(base))
	}
	r := rand.New(rand.NewPCG(16, 3))
	for round := 0; round < 12; round++ {
		buf := mutatedTrace(base, round, r)
		opt := opts[round%len(opts)]
		for _, seg := range []int64{8, 100, 4096, 4143, 9000, 65536} {
			checkDumpFile(t, buf, Config{}, opt, seg, 2+round%3)
		}
	}
	// Options whose listing depends on what came before: one pass.
	for _, opt := range []DumpOptions{{LastIP: true}, {Time: true}, {TCal: true}, {NoSync: true}} {
		checkDumpFile(t, base, Config{MTCFreq: 3, CPUID15EAX: 2, CPUID15EBX: 170, NomFreq: 36}, opt, 4096, 2)
	}
}

// TestDumpFileWriteError: a write error ends the listing and is returned.
func TestDumpFileWriteError(t *testing.T) {
	buf := realisticTrace(100<<10, 5)
	w := &failWriter{left: 3}
	_, err := dumpFile(w, bytes.NewReader(buf), int64(len(buf)), Config{}, DumpOptions{}, 2, 4096)
	if !errors.Is(err, errFail) {
		t.Fatalf("error %v, want %v", err, errFail)
	}
	if w.writes != 4 {
		t.Fatalf("%d writes, want 4 (3 and the failing one)", w.writes)
	}
}

var errFail = errors.New("disk full")

type failWriter struct{ left, writes int }

func (w *failWriter) Write(b []byte) (int, error) {
	w.writes++
	if w.left == 0 {
		return 0, errFail
	}
	w.left--
	return len(b), nil
}

// FuzzDumpFile checks the equality on arbitrary bytes spliced into a
// realistic trace, with arbitrary segment sizes.
func FuzzDumpFile(f *testing.F) {
	f.Add([]byte{}, uint16(0), uint16(64))
	f.Add(bytes.Repeat([]byte{0x02, 0x82}, 12), uint16(4100), uint16(4096))
	f.Add([]byte{0x19, 1, 2}, uint16(8191), uint16(8))
	f.Add([]byte{0x02, 0xf3, 0x99}, uint16(12000), uint16(3000))
	base := realisticTrace(40<<10, 3)
	f.Fuzz(func(t *testing.T, garbage []byte, at, seg uint16) {
		k := int(at) % (len(base) + 1)
		buf := append(append(append([]byte{}, base[:k]...), garbage...), base[k:]...)
		checkDumpFile(t, buf, Config{}, DumpOptions{Raw: seg&1 != 0}, int64(seg)%20000+8, 2)
	})
}
