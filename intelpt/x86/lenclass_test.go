package x86

import (
	"debug/elf"
	"encoding/binary"
	"testing"
)

// TestLenClassEqualsDecode: LenClass gives Decode's length, class and error
// at every byte offset of random code and of libc's text, in every mode,
// including the last 15 bytes (fewer than 16 bytes: LenClass's fast path is
// not taken), and its fast path is taken.
func TestLenClassEqualsDecode(t *testing.T) {
	bufs := [][]byte{randomCode(2, 1<<18)}
	if f, err := elf.Open("/lib/x86_64-linux-gnu/libc.so.6"); err == nil {
		if s := f.Section(".text"); s != nil {
			if b, err := s.Data(); err == nil {
				bufs = append(bufs, b)
			}
		}
		f.Close()
	}
	var decoded int
	paths := map[string]int{}
	for _, code := range bufs {
		for _, mode := range []Mode{0, Mode16, Mode32, Mode64, 4} {
			for off := range code {
				var in Inst
				err := Decode(code[off:], mode, &in)
				n, c, lerr := LenClass(code, off, mode)
				if n != int(in.Len) || c != in.Class || lerr != err {
					t.Fatalf("%v % x: LenClass %d %v %v, Decode %d %v %v", mode, code[off:min(off+15, len(code))],
						n, c, lerr, in.Len, in.Class, err)
				}
				if err == nil {
					decoded++
				}
				if mode == Mode64 && len(code)-off >= 16 {
					paths[lcPath(code[off:])]++
				}
			}
		}
	}
	t.Logf("%d offsets decoded; 64-bit paths: %v", decoded, paths)
	if paths["fast"] == 0 || paths["more"] == 0 {
		t.Errorf("a path is never taken: %v", paths)
	}
}

// lcPath repeats LenClass's choice of path for the code at the start of
// b (at least 16 bytes, 64-bit mode): "fast" (the tables), "more"
// (lcMoreLen) or "decode".
func lcPath(b []byte) string {
	w := binary.LittleEndian.Uint64(b)
	i, t := uint(0), lcTabs[0]
	if lcTabs[0].op00[b[0]]&lcLegacy != 0 {
		var ok bool
		if i, t, ok = lcPrefixes(w); !ok {
			return "decode"
		}
		w >>= 8 * i
		b = b[i:]
	}
	var a uint16
	switch {
	case b[0]&0xF0 == 0x40:
		a = t.op01[b[1]]
	case b[0] == 0x0F:
		a = t.op11[b[1]]
	default:
		a = t.op00[b[0]]
	}
	if a&lcSlow == 0 {
		return "fast"
	}
	if a&lcMore != 0 {
		if _, _, ok := lcMoreLen(w, i, t); ok {
			return "more"
		}
	}
	return "decode"
}

func TestLenClassAllocs(t *testing.T) {
	code := hexb(t, "48 8b 44 24 08 62 f1 7c 48 58 00 00 00 00 00 00 00")
	if n := testing.AllocsPerRun(100, func() {
		_, _, _ = LenClass(code, 0, Mode64)
		_, _, _ = LenClass(code, 5, Mode64)
	}); n != 0 {
		t.Errorf("%v allocations per LenClass", n)
	}
}

// BenchmarkLenClassLibc walks libc's .text with LenClass (length + class
// of each instruction, each decode starting where the previous one ended);
// reports instructions per second.
func BenchmarkLenClassLibc(b *testing.B) {
	text := libcText(b)
	var classes [numClasses]int
	n := 0
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for off := 0; off < len(text); {
			l, c, err := LenClass(text, off, Mode64)
			if err != nil {
				off++
				continue
			}
			classes[c]++
			off += l
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "insn/s")
	b.ReportMetric(float64(n)/float64(b.N), "insn/op")
	branches := 0
	for c, k := range classes {
		if Class(c).IsBranch() {
			branches += k
		}
	}
	b.ReportMetric(float64(branches)/float64(b.N), "branches/op")
}
