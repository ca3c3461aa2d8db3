package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestPTStatsWorkers runs pt stats on a raw trace large enough to be cut
// in segments with --workers 2 and 3 and checks that the text and JSON
// summaries are those of one decoder (--workers 1), with a decoding error
// in the middle so that a resync crosses the counts.
func TestPTStatsWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 17 MiB trace")
	}
	var e intelpt.Encoder
	for tsc := uint64(1000); len(e.Bytes()) < intelpt.ParallelStatsMin+1<<20; tsc += 3000 {
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: tsc})
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		for i := 0; i < 400; i++ {
			e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 3, Payload: uint64(i & 7)})
			e.Encode(intelpt.Packet{Kind: intelpt.KindCYC, Payload: uint64(i%30 + 1)})
			e.Encode(intelpt.Packet{Kind: intelpt.KindMTC, Payload: uint64(i & 0xff)})
		}
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	buf := e.Bytes()
	buf[len(buf)/2+5], buf[len(buf)/2+6] = 0x02, 0x00 // not a packet: an error and a resync
	path := filepath.Join(t.TempDir(), "big.pt")
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, json := range []bool{false, true} {
		args := func(w string) []string {
			a := []string{"pt", "stats", "--workers", w}
			if json {
				a = append(a, "--json")
			}
			return append(a, path)
		}
		// The bad packet's skipped bytes are loss: exit 3 for every
		// --workers, with the same output.
		want, _, code := runIotap(t, args("1")...)
		if code != 3 {
			t.Fatalf("--workers 1: exit %d, want 3 (the error skipped bytes)", code)
		}
		for _, w := range []string{"2", "3"} {
			got, _, code := runIotap(t, args(w)...)
			if code != 3 || got != want {
				t.Fatalf("--workers %s (json %v): exit %d\n%s\nwant (--workers 1):\n%s", w, json, code, got, want)
			}
		}
	}
}
