package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// benchInput writes the bundled file repeated n times to a temp file.
func benchInput(b *testing.B, src string, n int) string {
	b.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Skip(err)
	}
	p := filepath.Join(b.TempDir(), filepath.Base(src))
	if err := os.WriteFile(p, bytes.Repeat(data, n), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchExport(b *testing.B, in string) {
	st, _ := os.Stat(in)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		x, err := New(Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := x.ExportPath(context.Background(), in); err != nil {
			b.Fatal(err)
		}
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cpuSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(st.Size())*float64(b.N)/1e6/cpu, "MB/cpu-s")
	}
}

func BenchmarkExportMMIO(b *testing.B) {
	benchExport(b, benchInput(b, "../testdata/mmiotrace/e1000-probe.log", 40))
}

func BenchmarkExportUSB(b *testing.B) {
	benchExport(b, benchInput(b, "../testdata/usbmon/lab-capture.pcapng", 100))
}

// BenchmarkExportEvents: 200,000 user events (the capture's four
// repeated), less than one sorted run (maxSortedEvents): every event is
// held until the run is written, so B/op shows what an event costs while
// it waits (docs/performance.md, memory table).
func BenchmarkExportEvents(b *testing.B) {
	benchExport(b, benchInput(b, "../testdata/capture/events.ndjson", 50_000))
}
