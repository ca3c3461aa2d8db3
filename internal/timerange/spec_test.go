package timerange

import (
	"strings"
	"testing"
	"time"
)

func TestParseSpecResolve(t *testing.T) {
	marks := map[string]int64{"probe done": 50e9, "probe done 2": 60e9, "iotap capture start mono=5": 11e9}
	clock := Clock{Start: 10e9, HasStart: true, Marker: func(name string) (int64, bool) {
		names := []string{"iotap capture start mono=5", "probe done 2", "probe done"}
		if i := MatchMarker(names, name); i >= 0 {
			return marks[names[i]], true
		}
		return 0, false
	}}
	wallClock := Clock{Start: 1_700_000_000e9, HasStart: true, HasWall: true}
	for _, tc := range []struct {
		from, to string
		c        Clock
		want     Window
		err      string
	}{
		{"1.5", "2", clock, Window{From: 11.5e9, To: 12e9, HasFrom: true, HasTo: true}, ""},
		{"+1.5", "", clock, Window{From: 11.5e9, HasFrom: true}, ""},
		{"@12.345678", "@13", clock, Window{From: 12_345_678_000, To: 13e9, HasFrom: true, HasTo: true}, ""},
		{"@12.3", "@12s500ms", clock, Window{From: 12.3e9, To: 12.5e9, HasFrom: true, HasTo: true}, ""}, // a duration under the @T bound (1e10 s overflowed time.Duration)
		{"mark:probe done", "+2s", clock, Window{From: 50e9, To: 52e9, HasFrom: true, HasTo: true}, ""},
		{"mark:iotap capture start", "", clock, Window{From: 11e9, HasFrom: true}, ""}, // prefix
		{"mark:probe done", "mark:probe done 2", clock, Window{From: 50e9, To: 60e9, HasFrom: true, HasTo: true}, ""},
		{"", "+1s", clock, Window{To: 11e9, HasTo: true}, ""},
		{"@1700000000.000000001", "2023-11-14T22:13:21Z", wallClock, Window{From: 1_700_000_000_000_000_001, To: 1_700_000_001e9, HasFrom: true, HasTo: true}, ""},
		{"2023-11-14T22:13:21Z", "", clock, Window{}, "no wall-clock"},
		{"mark:nope", "", clock, Window{}, "no marker"},
		{"mark:probe done 2", "mark:probe done", clock, Window{}, "not before"},
		{"@20", "5", clock, Window{}, "not before"}, // 5 from start = 15 s
		{"mark:", "", clock, Window{}, "marker's name"},
		{"@2026-01-01T00:00:00Z", "", clock, Window{}, "not an RFC 3339"},
		{"", "+0", clock, Window{}, "holds nothing"},
		{"@5", "@5", clock, Window{}, "not before"},
		{"mark:a", "mark:a", clock, Window{}, "not before"},
	} {
		s, err := ParseSpec(tc.from, tc.to)
		var w Window
		if err == nil {
			w, err = s.Resolve(tc.c)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q..%q: %+v %v; want error with %q", tc.from, tc.to, w, err, tc.err)
			}
			continue
		}
		if err != nil || w != tc.want {
			t.Errorf("%q..%q: %+v %v; want %+v", tc.from, tc.to, w, err, tc.want)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"1.5", "+2s", "@12.5", "mark:x", "2026-11-25T12:00:00Z", "@1e10", "+inf"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, from, to string) {
		s, err := ParseSpec(from, to)
		if err != nil {
			return
		}
		w, err := s.Resolve(Clock{Start: 1e9, HasStart: true, HasWall: true, Marker: func(string) (int64, bool) { return 7e9, true }})
		if err == nil && w.HasFrom && w.HasTo && w.From >= w.To {
			t.Fatalf("empty window %+v from %q..%q", w, from, to)
		}
		if _, err := ParseSpecRange(s.String()); err != nil && !strings.Contains(s.String(), "..") {
			t.Fatalf("String %q does not parse: %v", s.String(), err)
		}
	})
}

// On a trace without a timed record, times from its start are past its
// end and keep their order: [0, 100) is an empty window, not a reversed
// one (a capture killed inside its first record).
func TestResolveNoStart(t *testing.T) {
	s, err := ParseSpec("0", "100")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Resolve(Clock{})
	if err != nil {
		t.Fatalf("Resolve without a start: %v", err)
	}
	if w.From >= w.To || w.Contains(0) || w.Contains(time.Now().UnixNano()) {
		t.Errorf("window %+v: want an ordered window past every time", w)
	}
}
