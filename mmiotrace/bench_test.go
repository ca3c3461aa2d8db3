//go:build linux

package mmiotrace

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	iunix "github.com/iotap/iotap/internal/unix"
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
	b.ReportAllocs()
	var rec Record
	cpuRate(b, len(data), func() {
		readRecords(b, NewReader(bytes.NewReader(data)), &rec)
	})
}

// readRecords reads rd to its end into rec.
func readRecords(b *testing.B, rd *Reader, rec *Record) {
	for {
		err := rd.ReadInto(rec)
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
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

// BenchmarkFilterChunk measures one worker of the parallel filter on one
// core: every line is parsed and validated, the awk-like criteria applied.
func BenchmarkFilterChunk(b *testing.B) {
	data := benchLog(b)
	var kw KindSet
	kw.Add(KindWrite)
	f := &Filter{Kinds: kw, Widths: 1 << 4, Ranges: []AddrRange{{0xfebc0100, 0xfebc0200}}}
	b.SetBytes(int64(len(data)))
	j := &chunkJob{data: data}
	cpuRate(b, len(data), func() {
		j.lines, j.kept = 0, 0
		j.run(f, false)
		if j.err != nil {
			b.Fatal(j.err)
		}
	})
}

// cpuRate runs fn b.N times on a locked thread and reports the rate per
// second of that thread's CPU time (cpu-MB/s), which other processes on a
// loaded machine do not change, next to the wall-clock MB/s.
func cpuRate(b *testing.B, size int, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	c0, err := iunix.ClockNS(iunix.ClockThreadCPU)
	for i := 0; i < b.N; i++ {
		fn()
	}
	c1, err1 := iunix.ClockNS(iunix.ClockThreadCPU)
	if err == nil && err1 == nil && c1 > c0 {
		b.ReportMetric(float64(size)*float64(b.N)/(float64(c1-c0)/1e9)/1e6, "cpu-MB/s")
	}
}

// benchFile returns up to the first 64 MiB (whole lines) of the log named
// by $IOTAP_MMIO_BENCH_LOG, e.g. one written by mmiotrace/internal/mmiogen.
func benchFile(b *testing.B) []byte {
	b.Helper()
	p := os.Getenv("IOTAP_MMIO_BENCH_LOG")
	if p == "" {
		b.Skip("set IOTAP_MMIO_BENCH_LOG to a log file")
	}
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data := make([]byte, 64<<20)
	n, _ := io.ReadFull(f, data)
	data = data[:n]
	return data[:bytes.LastIndexByte(data, '\n')+1]
}

// BenchmarkReadIntoFile is BenchmarkReadInto on benchFile's data.
func BenchmarkReadIntoFile(b *testing.B) {
	data := benchFile(b)
	b.SetBytes(int64(len(data)))
	var rec Record
	cpuRate(b, len(data), func() {
		readRecords(b, &Reader{buf: data, w: len(data), eof: true, started: true, maxLine: DefaultMaxLine}, &rec)
	})
}

// BenchmarkFilterChunkFile is BenchmarkFilterChunk on benchFile's data
// with bench/mmio.sh's criteria.
func BenchmarkFilterChunkFile(b *testing.B) {
	data := benchFile(b)
	var kw KindSet
	kw.Add(KindWrite)
	f := &Filter{Kinds: kw, Widths: 1 << 4, Ranges: []AddrRange{{0xfebc0000, 0xfebc0100}}}
	b.SetBytes(int64(len(data)))
	j := &chunkJob{data: data}
	cpuRate(b, len(data), func() {
		j.lines, j.kept = 0, 0
		j.out = j.out[:0]
		j.run(f, false)
		if j.err != nil {
			b.Fatal(j.err)
		}
	})
}
