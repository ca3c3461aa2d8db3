package x86

import "testing"

// FuzzDecode: Decode never panics, a success has 1 <= Len <= min(15,
// len(code)), an error leaves in zeroed, and decoding is deterministic and
// independent of bytes after the instruction.
func FuzzDecode(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add(hexb(f, tt.code), uint8(tt.mode))
	}
	f.Fuzz(func(t *testing.T, code []byte, m uint8) {
		mode := Mode(m%4 + 0) // includes the invalid mode 0
		var in Inst
		err := Decode(code, mode, &in)
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
