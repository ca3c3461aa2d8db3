package x86

import (
	"debug/elf"
	"testing"
)

// libcText returns libc.so.6's .text, or skips.
func libcText(b testing.TB) []byte {
	f, err := elf.Open("/lib/x86_64-linux-gnu/libc.so.6")
	if err != nil {
		b.Skipf("libc.so.6: %v", err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil {
		b.Skip("libc.so.6 has no .text")
	}
	data, err := s.Data()
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkDecodeLibc decodes libc's .text linearly (length + class), as a
// flow decoder walks code; reports instructions per second.
func BenchmarkDecodeLibc(b *testing.B) {
	text := libcText(b)
	var in Inst
	n := 0
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for off := 0; off < len(text); {
			if Decode(text[off:], Mode64, &in) != nil {
				off++
				continue
			}
			off += int(in.Len)
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "insn/s")
	b.ReportMetric(float64(n)/float64(b.N), "insn/op")
}
