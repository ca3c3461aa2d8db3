package timeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/iotap/iotap/intelpt/calls"
)

// TestPTCallsCutTrace: the calls track of a stream that ends inside a
// packet is truncated, with the packet's offset, as pt calls reports it
// (calls.Result.Cut), so that Stats.Loss reports it even when the calls
// are drawn without the packet track (a library user's timeline). The
// oracle is libipt's ptdump: its listing of call_direct-ret_compressed
// has a FUP at 0x1c and a packet at 0x1f, so the first 0x1d bytes end 1
// byte into the FUP; the first 0x1c end at a packet boundary, no loss.
// Before, the calls track said nothing of the cut.
func TestPTCallsCutTrace(t *testing.T) {
	const lib = "../intelpt/testdata/libipt/"
	full, err := os.ReadFile(lib + "call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	j := calls.Job{Raw: []string{lib + "call_direct-ret_compressed.bin:0x100000"}}
	for _, c := range []struct {
		cut  int
		loss []string
	}{
		{0x1d, []string{"cut.pt: truncated: tid 1: trace ends inside a packet at offset 0x1c (last 1 bytes) (what comes before is in the timeline)"}},
		{0x1c, nil},
	} {
		path := filepath.Join(t.TempDir(), "cut.pt")
		if err := os.WriteFile(path, full[:c.cut], 0o600); err != nil {
			t.Fatal(err)
		}
		in, o, err := j.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := Merge(context.Background(), io.Discard, NewPTCallsSources("cut.pt", in, o), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Loss(); !slices.Equal(got, c.loss) || st.Inputs[0].Slices == 0 {
			t.Errorf("cut at %#x: loss %q, want %q (%d slices)", c.cut, got, c.loss, st.Inputs[0].Slices)
		}
	}
}
