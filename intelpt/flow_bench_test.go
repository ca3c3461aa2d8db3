package intelpt_test

import (
	"io"
	"sync"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/internal/ptgen"
)

var benchProg = sync.OnceValue(func() *ptgen.Program {
	p, err := ptgen.Generate(ptgen.Config{Seed: 1, Insns: 2_000_000, Timing: true, NoIPs: true})
	if err != nil {
		panic(err)
	}
	return p
})

func benchImage(p *ptgen.Program) *intelpt.Image {
	im := intelpt.NewImage()
	if _, err := im.Add(p.Code, p.Base, intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}, "code"); err != nil {
		panic(err)
	}
	return im
}

// countInsns decodes the whole trace with d and returns the instructions.
func countInsns(tb testing.TB, d *intelpt.InsnDecoder) int {
	n := 0
	var in intelpt.Insn
	var ev intelpt.Event
	for {
		st, err := d.SyncForward()
		if err != nil {
			return n
		}
		for err == nil {
			for st&intelpt.StatusEventPending != 0 && err == nil {
				st, err = d.Event(&ev)
			}
			if err != nil || st&intelpt.StatusEOS != 0 {
				break
			}
			st, err = d.Next(&in)
			if in.Size != 0 {
				n++
			}
		}
		if err != nil {
			tb.Logf("error %v", err)
		}
	}
}

func countBlocks(tb testing.TB, d *intelpt.BlockDecoder) int {
	n := 0
	var b intelpt.Block
	var ev intelpt.Event
	for {
		st, err := d.SyncForward()
		if err != nil {
			return n
		}
		for err == nil {
			for st&intelpt.StatusEventPending != 0 && err == nil {
				st, err = d.Event(&ev)
			}
			if err != nil || st&intelpt.StatusEOS != 0 {
				break
			}
			st, err = d.Next(&b)
			n += b.NInsn
		}
		if err != nil {
			tb.Logf("error %v", err)
		}
	}
}

// BenchmarkInsnDecoder decodes a generated 2 M-instruction trace per op.
func BenchmarkInsnDecoder(b *testing.B) {
	p := benchProg()
	im := benchImage(p)
	b.SetBytes(int64(len(p.Trace)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d := intelpt.NewInsnDecoder(p.Trace, intelpt.FlowConfig{Image: im})
		if n := countInsns(b, d); n != p.Count {
			b.Fatalf("decoded %d instructions, want %d", n, p.Count)
		}
	}
	b.ReportMetric(float64(p.Count)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minsn/s")
}

// BenchmarkBlockDecoder decodes the same trace block by block.
func BenchmarkBlockDecoder(b *testing.B) {
	p := benchProg()
	im := benchImage(p)
	b.SetBytes(int64(len(p.Trace)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d := intelpt.NewBlockDecoder(p.Trace, intelpt.FlowConfig{Image: im})
		if n := countBlocks(b, d); n != p.Count {
			b.Fatalf("decoded %d instructions, want %d", n, p.Count)
		}
	}
	b.ReportMetric(float64(p.Count)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minsn/s")
}

// TestFlowAllocs: decoding allocates nothing per instruction: a whole
// decode of a 100 k-instruction trace (the image's decode caches already
// filled) allocates only the decoder itself.
func TestFlowAllocs(t *testing.T) {
	p, err := ptgen.Generate(ptgen.Config{Seed: 5, Insns: 100_000, Timing: true, NoIPs: true})
	if err != nil {
		t.Fatal(err)
	}
	im := benchImage(p)
	countInsns(t, intelpt.NewInsnDecoder(p.Trace, intelpt.FlowConfig{Image: im}))
	countBlocks(t, intelpt.NewBlockDecoder(p.Trace, intelpt.FlowConfig{Image: im}))
	n := testing.AllocsPerRun(3, func() {
		if got := countInsns(t, intelpt.NewInsnDecoder(p.Trace, intelpt.FlowConfig{Image: im})); got != p.Count {
			t.Fatalf("decoded %d instructions, want %d", got, p.Count)
		}
	})
	if n > 2 {
		t.Errorf("instruction decoder: %v allocations for %d instructions", n, p.Count)
	}
	n = testing.AllocsPerRun(3, func() {
		if got := countBlocks(t, intelpt.NewBlockDecoder(p.Trace, intelpt.FlowConfig{Image: im})); got != p.Count {
			t.Fatalf("decoded %d instructions, want %d", got, p.Count)
		}
	})
	if n > 2 {
		t.Errorf("block decoder: %v allocations for %d instructions", n, p.Count)
	}
}

// FlowOptions.Progress is called every 65,536 blocks (block decoder) or
// instructions (instruction decoder) with a trace offset that never goes
// back and stays inside the trace.
func TestFlowListingProgress(t *testing.T) {
	p, err := ptgen.Generate(ptgen.Config{Seed: 7, Insns: 1_000_000, Timing: true, NoIPs: true})
	if err != nil {
		t.Fatal(err)
	}
	im := benchImage(p)
	for _, block := range []bool{true, false} {
		var offs []int64
		o := intelpt.FlowOptions{BlockDecoder: block, Quiet: true, Progress: func(off int64) { offs = append(offs, off) }}
		st, err := intelpt.FlowListing(io.Discard, p.Trace, intelpt.FlowConfig{Image: im}, o)
		if err != nil {
			t.Fatal(err)
		}
		units := st.Insns
		if block {
			units = st.Blocks
		}
		if want := int(units / 65536); len(offs) != want || want == 0 {
			t.Errorf("block=%v: %d progress calls for %d units, want %d (> 0)", block, len(offs), units, want)
		}
		for i, off := range offs {
			if off < 0 || off > int64(len(p.Trace)) || (i > 0 && off < offs[i-1]) {
				t.Errorf("block=%v: progress offsets %v not increasing inside the %d-byte trace", block, offs, len(p.Trace))
				break
			}
		}
	}
}
