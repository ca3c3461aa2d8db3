package timeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"testing"
)

// TestPTSourceCutTrace: a raw PT stream that ends inside a packet is
// truncated with the packet's offset in the stream, in pt stats' words
// (intelpt.StatsLoss), also when the packet is past the first chunk
// (ptChunk). The oracle is libipt's ptdump: call_direct-ret_compressed
// has a FUP at 0x1c, so its first 0x1d bytes end 1 byte into it; PAD
// bytes before it move it by their count. Before, the packet track said
// "truncated" with no offset (Truncation empty).
func TestPTSourceCutTrace(t *testing.T) {
	full, err := os.ReadFile("../intelpt/testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	for _, pad := range []int{0, ptChunk + 5} {
		trace := append(make([]byte, pad), full[:0x1d]...) // PAD packets are 0x00
		st, err := Merge(context.Background(), io.Discard, []Source{NewPTSource("cut.pt", bytes.NewReader(trace), nil)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("trace ends inside a packet at offset %#x (last 1 bytes)", pad+0x1c)
		if in := st.Inputs[0]; !in.Truncated || in.Truncation != want {
			t.Errorf("pad %d: truncated %v %q, want %q", pad, in.Truncated, in.Truncation, want)
		}
	}
}
