package report

import "testing"

func TestFmtLatency(t *testing.T) {
	for _, tc := range []struct {
		us   int64
		want string
	}{
		{0, "0s"}, {45, "45µs"}, {154, "154µs"}, {999, "999µs"}, {1033, "1.03ms"}, {7315, "7.32ms"},
		{219136, "219ms"}, {4161536, "4.16s"}, {18686347, "18.7s"}, {100000, "100ms"},
	} {
		if got := FmtLatency(tc.us); got != tc.want {
			t.Errorf("FmtLatency(%d) = %q, want %q", tc.us, got, tc.want)
		}
	}
}
