package x86

import (
	"debug/elf"
	"encoding/binary"
	"testing"
)

// TestLenClassEqualsDecode: LenClass gives Decode's length, class and error
// at every byte offset of random code and of libc's text, in every mode,
// including the last 15 bytes (fewer than 16 bytes: LenClass's fast path is
// not taken), and its fast path is taken. LenClass64, at every offset
// (the 8 bytes from there, zeros past the end of code), either declines
// (0, Other) or gives Decode's 64-bit length and class, or a length
// longer than what is left of code where Decode says ErrTruncated.
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
	var decoded, pair int
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
				if mode == Mode64 {
					n64, c64 := LenClass64(word(code[off:]))
					switch {
					case n64 == 0 && c64 != Other,
						n64 != 0 && n64 <= len(code)-off && (n64 != n || c64 != c || err != nil),
						n64 > len(code)-off && err != ErrTruncated:
						t.Fatalf("% x: LenClass64 %d %v, Decode %d %v %v", code[off:min(off+15, len(code))],
							n64, c64, in.Len, in.Class, err)
					case n64 != 0:
						pair++
					}
				}
				if mode == Mode64 && len(code)-off >= 16 {
					paths[lcPath(code[off:])]++
				}
			}
		}
	}
	t.Logf("%d offsets decoded; 64-bit paths: %v; LenClass64 decodes %d", decoded, paths, pair)
	if paths["pair"] == 0 || paths["tier2"] == 0 || paths["fast"] == 0 || paths["more"] == 0 || paths["decode"] == 0 {
		t.Errorf("a path is never taken: %v", paths)
	}
}

// lcPath repeats LenClass's choice of path for the code at the start of
// b (at least 16 bytes, 64-bit mode): "pair" (LenClass64), "tier2"
// (lcTier2), "fast" (the tables), "more" (lcMoreLen) or "decode".
func lcPath(b []byte) string {
	w := binary.LittleEndian.Uint64(b)
	if n, _ := LenClass64(w); n != 0 {
		return "pair"
	}
	if n, _ := lcTier2(w); n != 0 {
		return "tier2"
	}
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

// word is the 8 bytes at the start of b, little-endian, zeros past its
// end.
func word(b []byte) uint64 {
	var w [8]byte
	copy(w[:], b)
	return binary.LittleEndian.Uint64(w[:])
}

// TestLenClass64Declines: LenClass64 leaves legacy prefixes, REX 0F, VEX,
// EVEX and the F6, F7 and FF groups after a REX to LenClass (0, Other),
// and decodes a few of each kind it takes (against objdump's lengths).
func TestLenClass64Declines(t *testing.T) {
	for _, s := range []string{"66 90", "f3 0f 1e fa", "64 48 8b 04 25 28 00 00 00", "48 0f af c1",
		"c5 f8 77", "c4 e2 79 18 00", "62 f1 7c 48 58 00", "48 f7 c0 01 00 00 00", "41 ff d4", "f0 48 0f b1 17"} {
		if n, c := LenClass64(word(hexb(t, s))); n != 0 || c != Other {
			t.Errorf("%s: %d %v, want 0 other", s, n, c)
		}
	}
	for _, tt := range []struct {
		code  string
		class Class
	}{
		{"89 c7", Other}, {"48 8b 44 24 08", Other}, {"48 b8 01 02 03 04 05 06 07 08", Other},
		{"b8 01 02 03 04", Other}, {"4c 8d 05 00 10 00 00", Other}, {"0f 1f 44 00 00", Other},
		{"0f 84 10 00 00 00", CondJump}, {"e8 00 00 00 00", CallDirect}, {"ff d0", CallIndirect},
		{"ff 24 c5 00 10 00 00", JumpIndirect}, {"c3", Return}, {"0f 05", Syscall}, {"f7 c1 00 01 00 00", Other},
		{"f6 c1 01", Other}, {"48 c7 04 24 00 00 00 00", Other}, {"0f b6 04 0a", Other}, {"8b 04 25 00 10 00 00", Other},
	} {
		code := hexb(t, tt.code)
		if n, c := LenClass64(word(code)); n != len(code) || c != tt.class {
			t.Errorf("%s: %d %v, want %d %v", tt.code, n, c, len(code), tt.class)
		}
	}
}

// TestLenClassPairs: LenClass and LenClass64 give Decode's length, class
// and error for every first two bytes of an instruction, alone and after
// each legacy prefix and REX (LenClass's second tier), followed by ModRMs
// of each addressing form (register, [reg], SIB with and without base,
// RIP-relative, disp8, disp32) and a byte that is also a SIB or an
// opcode.
func TestLenClassPairs(t *testing.T) {
	prefixes := []byte{0, 0x66, 0xF2, 0xF3, 0xF0, 0x2E, 0x3E, 0x26, 0x36, 0x64, 0x65, 0x67, 0x40, 0x41, 0x48, 0x4C, 0x4F}
	if testing.Short() {
		prefixes = []byte{0, 0x66, 0xF3, 0x64, 0x48}
	}
	tails := [][3]byte{{0xC0, 0x90, 0x90}, {0x00, 0x90, 0x90}, {0x04, 0x25, 0x90}, {0x04, 0x24, 0x90},
		{0x05, 0x90, 0x90}, {0x44, 0x24, 0x08}, {0x84, 0x05, 0x90}, {0x3D, 0x90, 0x90}, {0xD0, 0x90, 0x90}}
	code := make([]byte, 32)
	compared := 0
	for _, p := range prefixes {
		for b := range 1 << 16 {
			for _, tail := range tails {
				c := code[:0]
				if p != 0 {
					c = append(c, p)
				}
				c = append(c, byte(b>>8), byte(b))
				c = append(c, tail[:]...)
				for len(c) < 24 {
					c = append(c, 0x11)
				}
				var in Inst
				err := Decode(c, Mode64, &in)
				n, cl, lerr := LenClass(c, 0, Mode64)
				if n != int(in.Len) || cl != in.Class || lerr != err {
					t.Fatalf("% x: LenClass %d %v %v, Decode %d %v %v", c[:15], n, cl, lerr, in.Len, in.Class, err)
				}
				if n, cl := LenClass64(word(c)); n != 0 && (n != int(in.Len) || cl != in.Class || err != nil) {
					t.Fatalf("% x: LenClass64 %d %v, Decode %d %v %v", c[:15], n, cl, in.Len, in.Class, err)
				}
				compared++
			}
		}
	}
	t.Logf("%d encodings compared", compared)
}

func TestLenClassAllocs(t *testing.T) {
	code := hexb(t, "48 8b 44 24 08 62 f1 7c 48 58 00 00 00 00 00 00 00")
	if n := testing.AllocsPerRun(100, func() {
		_, _, _ = LenClass(code, 0, Mode64)
		_, _, _ = LenClass(code, 5, Mode64)
		_, _ = LenClass64(word(code))
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
