package userevents

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzPerfDataReader reads arbitrary perf.data files (seeds: perf record
// output of a kernel tracepoint, file and pipe mode, in
// testdata/fuzz/FuzzPerfDataReader): no panic, every error a
// *PerfDataError with an offset inside the input, or a sample error kept
// in Errors.
func FuzzPerfDataReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, size := range []int64{int64(len(b)), -1} {
			var r io.Reader = bytes.NewReader(b)
			if size < 0 {
				r = io.MultiReader(r) // a stream: pipe mode only
			}
			p, err := NewPerfDataReader(r, size)
			if err != nil {
				var pe *PerfDataError
				if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > int64(len(b)) {
					t.Fatalf("open: %v", err)
				}
				continue
			}
			var rec Recorded
			defer p.Close()
			for i := 0; i < 1<<16; i++ {
				err := p.Read(&rec)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					var pe *PerfDataError
					if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > int64(len(b)) {
						t.Fatalf("read: %v", err)
					}
					break
				}
				_ = AppendNDJSON(nil, &rec)
				_ = AppendText(nil, &rec)
			}
		}
	})
}

// FuzzParseTracingData parses arbitrary tracing-data blobs (seed: the one
// perf stored in the FuzzPerfDataReader seed).
func FuzzParseTracingData(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		td, err := ParseTracingData(b)
		if err != nil {
			var te *TracingDataError
			if !errors.As(err, &te) || te.Offset < 0 || te.Offset > len(b) {
				t.Fatalf("%v", err)
			}
			return
		}
		for id, f := range td.Formats {
			if f.ID != id {
				t.Fatalf("format %q under id %d", f.Name, id)
			}
		}
	})
}
