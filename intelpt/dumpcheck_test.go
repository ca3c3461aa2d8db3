package intelpt

import "testing"

// TestDumpOptionsCheck: --time and --tcal exclude each other, as in
// ptdump; either alone, or neither, is fine.
func TestDumpOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		o  DumpOptions
		ok bool
	}{{DumpOptions{}, true}, {DumpOptions{Time: true}, true}, {DumpOptions{TCal: true}, true}, {DumpOptions{Time: true, TCal: true}, false}} {
		if err := c.o.Check(); (err == nil) != c.ok {
			t.Errorf("time %v tcal %v: %v", c.o.Time, c.o.TCal, err)
		}
	}
}
