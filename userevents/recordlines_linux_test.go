package userevents

import "testing"

func TestPerfPages(t *testing.T) {
	for kb, want := range map[int]int{0: 1, 4: 1, 5: 2, 4096: 1024, 4097: 2048} {
		if got := perfPages(kb); got != want {
			t.Errorf("perfPages(%d) = %d, want %d", kb, got, want)
		}
	}
}
