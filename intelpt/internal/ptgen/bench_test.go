package ptgen

import (
	"runtime"
	"sync"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

var benchProgram = sync.OnceValues(func() (*Program, error) {
	return Generate(Config{Seed: 1, Insns: 3_000_000, Timing: true, NoIPs: true})
})

// BenchmarkInsnDecoder decodes a generated 3 M-instruction trace with the
// instruction decoder; it reports ns and allocations per instruction.
func BenchmarkInsnDecoder(b *testing.B) {
	benchFlow(b, func(p *Program, im *intelpt.Image) (int, []error) {
		d := intelpt.NewInsnDecoder(p.Trace, intelpt.FlowConfig{Image: im})
		var in intelpt.Insn
		n := 0
		errs, _ := walk(d, func() (int, error) {
			st, err := d.Next(&in)
			if in.Size != 0 {
				n++
			}
			return st, err
		}, 1<<40)
		return n, errs
	})
}

// BenchmarkBlockDecoder decodes the same trace block by block.
func BenchmarkBlockDecoder(b *testing.B) {
	benchFlow(b, func(p *Program, im *intelpt.Image) (int, []error) {
		d := intelpt.NewBlockDecoder(p.Trace, intelpt.FlowConfig{Image: im})
		var blk intelpt.Block
		n := 0
		errs, _ := walk(d, func() (int, error) {
			blk.NInsn = 0
			st, err := d.Next(&blk)
			n += blk.NInsn
			return st, err
		}, 1<<40)
		return n, errs
	})
}

// benchFlow runs decode (one pass over the trace, returning the
// instructions decoded) b.N times.
func benchFlow(b *testing.B, decode func(*Program, *intelpt.Image) (int, []error)) {
	p, err := benchProgram()
	if err != nil {
		b.Fatal(err)
	}
	im := image(b, p)
	b.SetBytes(int64(len(p.Trace)))
	b.ReportAllocs()
	n := 0
	m0 := mallocs()
	for b.Loop() {
		k, errs := decode(p, im)
		if len(errs) > 0 {
			b.Fatal(errs[0])
		}
		n += k
	}
	reportPerInsn(b, n, mallocs()-m0)
}

func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

func reportPerInsn(b *testing.B, n int, allocs uint64) {
	if n == 0 {
		return
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/insn")
	b.ReportMetric(float64(allocs)/float64(n), "allocs/insn")
}
