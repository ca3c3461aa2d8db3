package x86

import "testing"

// FuzzDecode: Decode never panics, a success has 1 <= Len <= min(15,
// len(code)), an error leaves in zeroed, and decoding is deterministic and
// independent of bytes after the instruction. LenClass gives Decode's
// length, class and error, at the start of code and at each of its next
// 15 offsets, and so does LenClass64 in 64-bit mode where it decodes (the
// 8 bytes from the offset, zeros past the end; a length past the end is
// Decode's ErrTruncated).
func FuzzDecode(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add(hexb(f, tt.code), uint8(tt.mode))
		// and followed by NOPs: 16 bytes or more take LenClass's fast paths
		f.Add(append(hexb(f, tt.code), make16(0x90)...), uint8(tt.mode))
	}
	for seed := range int64(8) {
		f.Add(randomCode(seed, 48), uint8(Mode64))
	}
	f.Fuzz(func(t *testing.T, code []byte, m uint8) {
		mode := Mode(m%4 + 0) // includes the invalid mode 0
		var in Inst
		err := Decode(code, mode, &in)
		for off := 0; off <= 15 && off < len(code); off++ {
			var o Inst
			oerr := Decode(code[off:], mode, &o)
			if n, c, lerr := LenClass(code, off, mode); n != int(o.Len) || c != o.Class || lerr != oerr {
				t.Fatalf("% x at %d: LenClass %d %v %v, Decode %d %v %v", code, off, n, c, lerr, o.Len, o.Class, oerr)
			}
			if mode != Mode64 {
				continue
			}
			if n, c := LenClass64(word(code[off:])); n == 0 && c != Other ||
				n != 0 && n <= len(code)-off && (n != int(o.Len) || c != o.Class || oerr != nil) ||
				n > len(code)-off && oerr != ErrTruncated {
				t.Fatalf("% x at %d: LenClass64 %d %v, Decode %d %v %v", code, off, n, c, o.Len, o.Class, oerr)
			}
		}
		if err != nil {
			if in != (Inst{}) {
				t.Fatalf("error %v with non-zero Inst %+v", err, in)
			}
			if err != ErrInvalid && err != ErrTruncated {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if in.Len == 0 || int(in.Len) > MaxLen || int(in.Len) > len(code) {
			t.Fatalf("% x: bad length %d", code, in.Len)
		}
		var again Inst
		if err := Decode(code[:in.Len], mode, &again); err != nil || again != in {
			t.Fatalf("% x: decoding just the instruction gives %+v %v, want %+v", code, again, err, in)
		}
		if !in.Class.IsDirect() && in.Disp != 0 {
			t.Fatalf("% x: class %v with disp %d", code, in.Class, in.Disp)
		}
	})
}

func make16(b byte) []byte {
	p := make([]byte, 16)
	for i := range p {
		p[i] = b
	}
	return p
}
