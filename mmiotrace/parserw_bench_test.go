//go:build linux

package mmiotrace

import (
	"bytes"
	"runtime"
	"testing"

	iunix "github.com/iotap/iotap/internal/unix"
)

// fileLines returns benchFile's data cut at each line start, each slice
// running to the end of the data (as the reader's buffer does).
func fileLines(b *testing.B) [][]byte {
	data := benchFile(b)
	var ls [][]byte
	for len(data) > rwFastLen {
		ls = append(ls, data)
		i := bytes.IndexByte(data, '\n')
		data = data[i+1:]
	}
	return ls
}

// The BenchmarkParseRW* and BenchmarkScanRWFields benchmarks compare the
// R/W line parsers on every line of benchFile (other lines fail early).

func BenchmarkParseRWFast(b *testing.B) {
	ls := fileLines(b)
	var r Record
	cpuPerLine(b, len(ls), func() {
		for _, l := range ls {
			parseRWFast(l, &r, true)
		}
	})
}

func BenchmarkParseRWFields(b *testing.B) {
	ls := fileLines(b)
	var r Record
	cpuPerLine(b, len(ls), func() {
		for _, l := range ls {
			parseRWFields(l, &r)
		}
	})
}

func BenchmarkScanRWFields(b *testing.B) {
	ls := fileLines(b)
	var r Record
	cpuPerLine(b, len(ls), func() {
		for _, l := range ls {
			scanRWFields(l, &r)
		}
	})
}

// cpuPerLine runs fn b.N times on a locked thread and reports the
// thread's CPU time per line (cpu-ns/line).
func cpuPerLine(b *testing.B, lines int, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	c0, err := iunix.ClockNS(iunix.ClockThreadCPU)
	for i := 0; i < b.N; i++ {
		fn()
	}
	c1, err1 := iunix.ClockNS(iunix.ClockThreadCPU)
	if err == nil && err1 == nil && c1 > c0 {
		b.ReportMetric(float64(c1-c0)/float64(lines)/float64(b.N), "cpu-ns/line")
	}
}
