package timeline

import "testing"

// TestParseSize: the units by their usual meaning (KiB 1024, KB 1000),
// spaces around, what is refused; FormatSize reads back.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1000": 1000, "64K": 64 << 10, "256MiB": 256 << 20, "2GB": 2e9, "0": 0, " 3 KB ": 3000, "5B": 5, "1G": 1 << 30} {
		n, err := ParseSize(in)
		if err != nil || n != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, n, err, want)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q reads back as %d, %v", n, FormatSize(n), back, err)
		}
	}
	for _, bad := range []string{"ten", "-1", "1T", "9223372036854775807G", ""} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	if s := FormatSize(300 << 10); s != "300KiB" {
		t.Errorf("FormatSize: %q", s)
	}
}

func TestSizeFlag(t *testing.T) {
	var s Size
	for in, want := range map[string]int64{"1000": 1000, "64K": 64 << 10, "256MiB": 256 << 20, "2GB": 2e9, "0": 0} {
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("size %q: %d, %v; want %d", in, s, err, want)
		}
	}
	if err := s.Set("ten"); err == nil {
		t.Errorf("size \"ten\": no error")
	}
	s = 256 << 20
	if s.String() != "256MiB" {
		t.Errorf("String: %q, want 256MiB", s.String())
	}
}
