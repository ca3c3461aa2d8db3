package userevents

import "testing"

// Loss is empty only when nothing was lost or undecodable, and counts
// each.
func TestRecordLinesResultLoss(t *testing.T) {
	for _, c := range []struct {
		r    RecordLinesResult
		want string
	}{
		{RecordLinesResult{Written: 5, Events: 5}, ""},
		{RecordLinesResult{Events: 5, Lost: 2}, "2 event(s) lost, 0 undecodable"},
		{RecordLinesResult{Events: 5, Bad: 1}, "0 event(s) lost, 1 undecodable"},
		{RecordLinesResult{Lost: 7, Bad: 3}, "7 event(s) lost, 3 undecodable"},
	} {
		if got := c.r.Loss(); got != c.want {
			t.Errorf("%+v: Loss %q, want %q", c.r, got, c.want)
		}
	}
}
