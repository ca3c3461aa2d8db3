package calls

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/internal/ptgen"
	"github.com/iotap/iotap/intelpt/symtab"
)

// TestDecodeBlockPolicies: the calls the tracker rebuilds do not depend on
// how the block decoder cuts blocks. Decode (calls reported inside blocks,
// and, as nothing here has symbols, direct jumps followed) gives the same
// calls, gaps, counts and tree as a decoder that ends a block at every
// call and every jump, on generated traces with overflows and timing.
func TestDecodeBlockPolicies(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		p, err := ptgen.Generate(ptgen.Config{Seed: seed, Insns: 400_000, Timing: true, Overflows: 5, NoIPs: true})
		if err != nil {
			t.Fatal(err)
		}
		im := intelpt.NewImage()
		if _, err := im.Add(p.Code, p.Base, intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}, "code"); err != nil {
			t.Fatal(err)
		}
		run := func(fast bool) (string, Stats) {
			var out bytes.Buffer
			tr := NewTracker(func(c *Call) { fmt.Fprintf(&out, "%+v\n", *c) })
			tr.OnGap = func(g *Gap) { fmt.Fprintf(&out, "gap %+v\n", *g) }
			tr.Thread(1, NewProcSymbolizer(&intelpt.Process{PID: 1}, nil, symtab.Options{}))
			cfg := intelpt.FlowConfig{Image: im}
			var err error
			if fast {
				_, err = decode(p.Trace, cfg, tr, nil, nil)
			} else {
				cfg.Flags.EndOnCall, cfg.Flags.EndOnJump = true, true
				_, err = decodeFlags(p.Trace, cfg, tr, nil, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			tr.Finish(0)
			if err := WriteFolded(&out, tr.Tree, false); err != nil {
				t.Fatal(err)
			}
			st := tr.Stats
			st.Blocks = 0 // how blocks are cut is the point
			return out.String(), st
		}
		slow, slowStats := run(false)
		fast, fastStats := run(true)
		if slowStats != fastStats {
			t.Errorf("seed %d: stats %+v, ending blocks at every call and jump %+v", seed, fastStats, slowStats)
		}
		if slow != fast {
			t.Errorf("seed %d: the calls differ from those of a decoder ending blocks at every call and jump", seed)
		}
		if slowStats.Calls == 0 || slowStats.Gaps == 0 {
			t.Errorf("seed %d: %+v: want calls and gaps", seed, slowStats)
		}
		t.Logf("seed %d: %+v", seed, fastStats)
	}
}
