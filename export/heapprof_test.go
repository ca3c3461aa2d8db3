package export

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
)

// TestHeapProfileExport writes a heap profile of the export of the input
// named by IOTAP_EXPORT_HEAPPROF_IN, taken when 95% of it has been read
// (after a collection), to IOTAP_EXPORT_HEAPPROF_OUT: what the exporter
// holds near the end of a long input. A tool for docs/performance.md's
// memory table, skipped without the variables.
func TestHeapProfileExport(t *testing.T) {
	in, out := os.Getenv("IOTAP_EXPORT_HEAPPROF_IN"), os.Getenv("IOTAP_EXPORT_HEAPPROF_OUT")
	if in == "" || out == "" {
		t.Skip("IOTAP_EXPORT_HEAPPROF_IN and _OUT not set")
	}
	taken := false
	rg, _ := strconv.ParseInt(os.Getenv("IOTAP_EXPORT_HEAPPROF_RGROWS"), 10, 64)
	x, err := New(Options{Dir: t.TempDir(), RowGroupRows: rg, Input: func(_ string, size int64, r io.Reader) io.Reader {
		return &profReader{r: r, at: size * 95 / 100, do: func() {
			if taken {
				return
			}
			taken = true
			runtime.GC()
			f, err := os.Create(out)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				t.Error(err)
			}
		}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.ExportPath(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if !taken {
		t.Error("no profile taken")
	}
}

type profReader struct {
	r  io.Reader
	n  int64
	at int64
	do func()
}

func (p *profReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.n >= p.at {
		p.do()
	}
	return n, err
}
