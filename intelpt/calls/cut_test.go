package calls

import (
	"math/rand/v2"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/internal/ptgen"
	"github.com/iotap/iotap/intelpt/symtab"
)

// TestDecodeCutMatchesStats: where the calls decoder says a trace ends
// inside a packet (found where it stopped, without a second reading) is
// where the packet statistics say it does (intelpt.ComputeStats, which
// reads every packet; pt calls read the stream again with it before).
// Generated traces with timing, overflows and kernel excursions are cut
// at 400 random points each, decoded with their code (the decoder runs
// to the end), without it (every block a decoding error: the decoder
// resyncs at each PSB and stops at the last one's error) and with bytes
// damaged (bad packets, resynced).
func TestDecodeCutMatchesStats(t *testing.T) {
	truncated := 0
	for _, seed := range []uint64{3, 4} {
		p, err := ptgen.Generate(ptgen.Config{Seed: seed, Insns: 40_000, Timing: true, CYC: seed == 4, Overflows: 20, Kernel: seed == 3, NoIPs: true, PSBPeriod: 1024})
		if err != nil {
			t.Fatal(err)
		}
		code := intelpt.NewImage()
		if _, err := code.Add(p.Code, p.Base, intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}, "code"); err != nil {
			t.Fatal(err)
		}
		damaged := append([]byte(nil), p.Trace...)
		r := rand.New(rand.NewPCG(seed, 7))
		for range 20 {
			damaged[r.IntN(len(damaged))] = byte(r.Uint32())
		}
		for _, c := range []struct {
			name  string
			trace []byte
			im    *intelpt.Image
		}{{"code", p.Trace, code}, {"no code", p.Trace, intelpt.NewImage()}, {"damaged", damaged, code}} {
			for range 400 {
				cut := c.trace[:r.IntN(len(c.trace)+1)]
				tr := NewTracker(func(*Call) {})
				tr.Thread(1, NewProcSymbolizer(&intelpt.Process{PID: 1}, nil, symtab.Options{}))
				at, err := decode(cut, intelpt.FlowConfig{Image: c.im}, tr, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := int64(-1)
				if st := intelpt.ComputeStats(cut, intelpt.Config{}); st.Truncated {
					want = st.TruncatedAt
					truncated++
				}
				if at != want {
					t.Errorf("seed %d, %s, cut at %#x: ends inside a packet at %#x, stats say %#x", seed, c.name, len(cut), at, want)
				}
			}
		}
	}
	if truncated < 600 {
		t.Errorf("%d of 2,400 cuts inside a packet: too few to tell", truncated)
	}
}
