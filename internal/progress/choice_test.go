package progress

import (
	"bytes"
	"os"
	"testing"
)

// The whole truth table of Shown against its rule, and files that are not
// terminals.
func TestChoiceShown(t *testing.T) {
	for _, c := range []Choice{{}, {Set: true, On: true}, {Set: true}} {
		for i := 0; i < 8; i++ {
			errTerm, outTerm, busy := i&1 != 0, i&2 != 0, i&4 != 0
			want := errTerm && !(busy && outTerm) // the default
			if c.Set {
				want = c.On // --progress[=false] decides alone
			}
			if got := c.Shown(errTerm, outTerm, busy); got != want {
				t.Errorf("%+v stderr term %v stdout term %v busy %v: %v", c, errTerm, outTerm, busy, got)
			}
		}
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) {
		t.Error("a regular file or a buffer is a terminal")
	}
}
