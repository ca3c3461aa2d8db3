package mmiotrace

import (
	"io"
	"os"
	"testing"
)

// BenchmarkReadFile parses the log named by $IOTAP_MMIO_BENCH_LOG (e.g.
// one written by mmiotrace/internal/mmiogen) on one goroutine.
func BenchmarkReadFile(b *testing.B) {
	p := os.Getenv("IOTAP_MMIO_BENCH_LOG")
	if p == "" {
		b.Skip("set IOTAP_MMIO_BENCH_LOG to a log file")
	}
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	var rec Record
	for i := 0; i < b.N; i++ {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		rd := NewReader(f)
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}
