package usb

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
)

// benchPipeline runs what 'iotap usb read', 'read --json' and 'stats' run
// after opening the input: the whole pipeline over a pcapng held in memory
// (IOTAP_BENCH_PCAPNG, default the shared km003c capture), output
// discarded. Whole-process figures are bench/whole.sh's.
func benchPipeline(b *testing.B, run func(pl *Pipeline) error) {
	name := os.Getenv("IOTAP_BENCH_PCAPNG")
	if name == "" {
		name = sharedCapture(b, "km003c-adc-1000hz.pcapng")
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pl, err := OpenPipeline(bytes.NewReader(raw), "bench", int64(len(raw)), false, ReadOptions{Selection: AnySelection(), Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := run(pl); err != nil {
			b.Fatal(err)
		}
		pl.Close()
	}
}

func BenchmarkPipelineText(b *testing.B) {
	benchPipeline(b, func(pl *Pipeline) error { return pl.WriteText(context.Background(), io.Discard, false) })
}

func BenchmarkPipelineNDJSON(b *testing.B) {
	benchPipeline(b, func(pl *Pipeline) error { return pl.WriteNDJSON(context.Background(), io.Discard, "bench") })
}

func BenchmarkPipelineStats(b *testing.B) {
	benchPipeline(b, func(pl *Pipeline) error { _, err := pl.Stats(context.Background()); return err })
}
