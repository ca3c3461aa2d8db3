package intelpt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"testing/iotest"
)

// checkStatsFile compares ComputeStatsFile over buf, cut in segments of
// segSize bytes and decoded by workers goroutines, with one pass of
// ComputeStatsReader (the oracle: the streaming decoder the CLI used).
func checkStatsFile(t *testing.T, buf []byte, cfg Config, segSize int64, workers int) {
	t.Helper()
	want, err := ComputeStatsReader(iotest.HalfReader(bytes.NewReader(buf)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := computeStatsFile(bytes.NewReader(buf), int64(len(buf)), cfg, workers, segSize)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%d bytes, segments of %d, %d workers:\n got %+v\nwant %+v", len(buf), segSize, workers, got, want)
	}
}

// TestComputeStatsFileMatchesReader runs the segmented decoding over
// realistic traces (PSB+ every 4 KiB, TSC/MTC/CYC timing with and without
// the CPUID ratio that makes CYC count) that are clean, corrupted at
// random bytes (decoding errors and resyncs inside segments and at cuts),
// and cut short (a truncated last packet), with segments from a few bytes
// to many PSBs long.
func TestComputeStatsFileMatchesReader(t *testing.T) {
	base := realisticTrace(300<<10, 7)
	cfgs := []Config{{}, {MTCFreq: 3, CPUID15EAX: 2, CPUID15EBX: 170, NomFreq: 36}}
	r := rand.New(rand.NewPCG(15, 2))
	for round := 0; round < 12; round++ {
		buf := mutatedTrace(base, round, r)
		cfg := cfgs[round%len(cfgs)]
		for _, seg := range []int64{8, 100, 4096, 4143, 9000, 65536} {
			checkStatsFile(t, buf, cfg, seg, 2+round%3)
		}
	}
}

// FuzzComputeStatsFile checks the equality on arbitrary bytes spliced into
// a realistic trace, with arbitrary segment sizes.
func FuzzComputeStatsFile(f *testing.F) {
	f.Add([]byte{}, uint16(0), uint16(64))
	f.Add(bytes.Repeat([]byte{0x02, 0x82}, 12), uint16(4100), uint16(4096))
	f.Add([]byte{0x19, 1, 2}, uint16(8191), uint16(8))
	f.Add([]byte{0x02, 0xf3, 0x99}, uint16(12000), uint16(3000))
	base := realisticTrace(40<<10, 3)
	cfg := Config{MTCFreq: 3, CPUID15EAX: 2, CPUID15EBX: 170, NomFreq: 36}
	f.Fuzz(func(t *testing.T, garbage []byte, at, seg uint16) {
		k := int(at) % (len(base) + 1)
		buf := append(append(append([]byte{}, base[:k]...), garbage...), base[k:]...)
		checkStatsFile(t, buf, cfg, int64(seg)%20000+8, 2)
	})
}

func ExampleComputeStatsFile() {
	trace := realisticTrace(1<<20, 1)
	s, err := ComputeStatsFile(bytes.NewReader(trace), int64(len(trace)), Config{}, 2)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Bytes == int64(len(trace)), s.PSBs > 200, s.Errors)
	// Output: true true 0
}
