package calls

import (
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/internal/ptgen"
)

// Options.Progress sees the bytes decoded so far over all streams: it
// starts at 0, never goes back, stays within each stream while decoding it
// and ends no later than the sum of the streams' sizes.
func TestAnalyzeProgress(t *testing.T) {
	p, err := ptgen.Generate(ptgen.Config{Seed: 3, Insns: 1_000_000, NoIPs: true})
	if err != nil {
		t.Fatal(err)
	}
	im := intelpt.NewImage()
	if _, err := im.Add(p.Code, p.Base, intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}, "code"); err != nil {
		t.Fatal(err)
	}
	n := int64(len(p.Trace))
	in := &Input{Sideband: &intelpt.Sideband{}, Streams: []intelpt.PerfStream{
		{CPU: -1, TID: 10, Data: p.Trace}, {CPU: -1, TID: 11, Data: p.Trace}}}
	var got []int64
	if _, err := Analyze(in, Options{Image: im, TreeDepth: 64, Progress: func(done int64) { got = append(got, done) }}); err != nil {
		t.Fatal(err)
	}
	inFirst, inSecond := 0, 0
	for i, d := range got {
		if i > 0 && d < got[i-1] || d < 0 || d > 2*n {
			t.Fatalf("progress %v: not increasing within 0..%d", got, 2*n)
		}
		switch {
		case d > 0 && d <= n:
			inFirst++
		case d > n:
			inSecond++
		}
	}
	if len(got) == 0 || got[0] != 0 || inFirst == 0 || inSecond == 0 {
		t.Errorf("progress %v: want 0 first, then offsets inside both %d-byte streams", got, n)
	}
}
