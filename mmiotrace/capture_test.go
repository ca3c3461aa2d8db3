//go:build linux

package mmiotrace

import "testing"

func TestSuggestBufferKB(t *testing.T) {
	for _, tc := range []struct {
		res  CaptureResult
		want int
	}{
		{CaptureResult{BufferKB: 4, LostMarks: 1564}, 256},  // 4 + 98 KiB, doubled, rounded up
		{CaptureResult{BufferKB: 1408, Overruns: 10}, 4096}, // tiny loss: at least double
		{CaptureResult{BufferKB: 0, LostMarks: 1}, 4},       // unknown size
		{CaptureResult{BufferKB: 1024, LostMarks: 100000}, 16384},
	} {
		if got := tc.res.SuggestBufferKB(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.res, got, tc.want)
		}
	}
}
