package mmiotrace

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func benchLog(b *testing.B) []byte {
	b.Helper()
	return []byte(genLog(200000, 7))
}

// BenchmarkReadInto measures full parsing on one core (MB/s = bytes of
// log per second).
func BenchmarkReadInto(b *testing.B) {
	data := benchLog(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	b.ReportAllocs()
	var rec Record
	for i := 0; i < b.N; i++ {
		rd := NewReader(bytes.NewReader(data))
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkFilterLog measures the parallel awk-like filter.
func BenchmarkFilterLog(b *testing.B) {
	data := benchLog(b)
	var kw KindSet
	kw.Add(KindWrite)
	f := &Filter{Kinds: kw, Widths: 1 << 4, Ranges: []AddrRange{{0xfebc0100, 0xfebc0200}}}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := FilterLog(context.Background(), bytes.NewReader(data), io.Discard, f, FilterOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriter(b *testing.B) {
	recs := []*Record{}
	rd := NewReader(strings.NewReader(genLog(10000, 3)))
	for {
		r, err := rd.Read()
		if err != nil {
			break
		}
		recs = append(recs, r)
	}
	w := NewWriter(io.Discard)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range recs {
			w.Write(r)
		}
	}
}
