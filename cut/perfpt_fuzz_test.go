package cut

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/timerange"
)

// FuzzCutPerfDataPT: any input cuts without a panic (bad input is an
// error), and what a cut writes is a perf.data whose streams
// intelpt.PerfDataPT reads back, each no longer than the input's.
func FuzzCutPerfDataPT(f *testing.F) {
	b, err := os.ReadFile("../intelpt/testdata/libipt/two-cpus.perf.data")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, int64(0), int64(1e9))
	f.Add(b, int64(1), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, from, to int64) {
		if from < 0 || to <= from {
			return
		}
		w := timerange.Spec{From: timerange.Point{NS: from}, To: timerange.Point{NS: to}, HasFrom: true, HasTo: true}
		var out bytes.Buffer
		if _, err := CutPerfDataPT(context.Background(), data, w, &out); err != nil {
			return
		}
		orig, err := intelpt.PerfDataPT(data)
		if err != nil {
			t.Fatalf("cut an input PerfDataPT refuses: %v", err)
		}
		got, err := intelpt.PerfDataPT(out.Bytes())
		if err != nil {
			t.Fatalf("the cut does not read back: %v", err)
		}
		if len(got.Streams) != len(orig.Streams) {
			t.Fatalf("%d streams in the cut, %d in the input", len(got.Streams), len(orig.Streams))
		}
		for i := range got.Streams {
			if len(got.Streams[i].Data) > max(len(orig.Streams[i].Data), len(EmptyPT)) {
				t.Fatalf("stream %d: %d bytes in the cut, %d in the input", i, len(got.Streams[i].Data), len(orig.Streams[i].Data))
			}
		}
	})
}
