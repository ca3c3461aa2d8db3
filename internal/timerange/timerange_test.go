package timerange

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	wall := time.Date(2026, 11, 25, 12, 0, 0, 500000000, time.UTC).UnixNano()
	for _, tc := range []struct {
		from, to string
		want     Window
		err      string // substring; "" means no error
	}{
		{"", "", Window{}, ""},
		{"1.5", "", Window{From: 1_500_000_000, HasFrom: true}, ""},
		{"", "200ms", Window{To: 200_000_000, HasTo: true}, ""},
		{"250us", "1m30s", Window{From: 250_000, To: 90_000_000_000, HasFrom: true, HasTo: true}, ""},
		{"0", "0.000000001", Window{From: 0, To: 1, HasFrom: true, HasTo: true}, ""},
		{"2026-11-25T12:00:00.5Z", "", Window{From: wall, HasFrom: true, Wall: true}, ""},
		// The cases: infinite, huge, reversed, empty.
		{"1e300", "", Window{}, "more than"},
		{"inf", "", Window{}, "not a finite number"},
		{"+Inf", "", Window{}, "not a finite number"},
		{"NaN", "", Window{}, "not a finite number"},
		{"", "1e300", Window{}, "more than"},
		{"1e999", "", Window{}, "not a finite number"},
		{"", "2e9", Window{}, "more than"},
		{"5", "1", Window{}, "not before --to"},
		{"1", "1", Window{}, "not before --to"},
		{"", "0", Window{}, "holds nothing"},
		{"-1", "", Window{}, "negative"},
		{"", "-5ms", Window{}, "negative"},
		{"99999999999h", "", Window{}, "want seconds"},
		{"300000d", "", Window{}, "want seconds"},
		{"1.5", "2026-11-25T12:00:00Z", Window{}, "both be wall-clock"},
		{"soon", "", Window{}, "want seconds"},
	} {
		w, err := Parse(tc.from, tc.to)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q, %q) = %+v, %v; want error with %q", tc.from, tc.to, w, err, tc.err)
			}
			continue
		}
		if err != nil || w != tc.want {
			t.Errorf("Parse(%q, %q) = %+v, %v; want %+v", tc.from, tc.to, w, err, tc.want)
		}
	}
}

func TestParseRangeAndContains(t *testing.T) {
	w, err := ParseRange("1..2.5")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		t  int64
		in bool
	}{{999_999_999, false}, {1e9, true}, {2_499_999_999, true}, {2_500_000_000, false}} {
		if w.Contains(tc.t) != tc.in {
			t.Errorf("Contains(%d) = %v", tc.t, !tc.in)
		}
	}
	if w.String() != "1..2.5" {
		t.Errorf("String() = %q", w.String())
	}
	if open, err := ParseRange("3.."); err != nil || !open.Contains(1e12) || open.Contains(0) {
		t.Errorf("open range: %+v %v", open, err)
	}
	for _, bad := range []string{"3", "5..1", "inf..", "..1e300"} {
		if _, err := ParseRange(bad); err == nil {
			t.Errorf("ParseRange(%q) accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1.5", "200ms", "inf", "1e300", "2026-11-25T12:00:00Z", "-0", "0x1p-2", "1..2"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, from, to string) {
		w, err := Parse(from, to)
		if err != nil {
			return
		}
		if w.HasFrom && w.HasTo && w.From >= w.To {
			t.Fatalf("accepted empty window %+v", w)
		}
		if (w.HasFrom && w.From < 0) || (w.HasTo && w.To < 0 && !w.Wall) {
			t.Fatalf("negative bound %+v", w)
		}
		// String round-trips.
		w2, err := ParseRange(w.String())
		if err != nil || (w2.HasFrom != w.HasFrom || w2.HasTo != w.HasTo) {
			t.Fatalf("round trip %q: %+v %v", w.String(), w2, err)
		}
	})
}
