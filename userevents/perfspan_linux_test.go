package userevents

import "testing"

// TestPerfSpan checks the wrap-around copy of records split by the end of
// the ring.
func TestPerfSpan(t *testing.T) {
	var r PerfReader
	data := []byte("0123456789")
	if got := r.span(data, 2, 4); string(got) != "2345" {
		t.Errorf("inside: %q", got)
	}
	if got := r.span(data, 8, 5); string(got) != "89012" {
		t.Errorf("wrapped: %q", got)
	}
}
