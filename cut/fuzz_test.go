package cut

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// FuzzCut: any input cuts without a panic, reports bad input as an error,
// and a cut through an index of the same bytes equals the cut without it.
func FuzzCut(f *testing.F) {
	for _, p := range []string{eventsCap, textCap} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, int64(0), int64(1e9))
	}
	for _, p := range []string{mmioLog, pcapngCap} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 8192)], int64(1e8), int64(5e8))
	}
	f.Fuzz(func(t *testing.T, data []byte, from, to int64) {
		if from < 0 || to <= from {
			return
		}
		w := timerange.Spec{From: timerange.Point{NS: from}, To: timerange.Point{NS: to}, HasFrom: true, HasTo: true}
		in := Input{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
		var a bytes.Buffer
		_, errA := Cut(context.Background(), in, &a, Options{Window: w})
		ix, err := BuildIndex(context.Background(), in, 512)
		if err != nil {
			return
		}
		in.Index = ix
		var b bytes.Buffer
		res, errB := Cut(context.Background(), in, &b, Options{Window: w, Warn: func(m string) { t.Fatalf("warning on the indexed bytes: %s", m) }})
		if (errA == nil) != (errB == nil) {
			t.Fatalf("errors differ: %v / %v", errA, errB)
		}
		if errA == nil && (!bytes.Equal(a.Bytes(), b.Bytes()) || !res.Indexed) {
			t.Fatalf("indexed cut differs: %q / %q", a.Bytes(), b.Bytes())
		}
	})
}

// FuzzCutPT: any bytes starting like a raw PT stream cut without a panic,
// and the cut is the input's bytes between the offsets it reports, the
// first a PSB unless the cut is empty or starts at the input's start.
func FuzzCutPT(f *testing.F) {
	seed, _ := ptSegments(f, []uint64{1000, 2000, 3000, 4000}, 2)
	f.Add(seed, int64(1500), int64(3500))
	f.Add(seed[:len(seed)-7], int64(0), int64(2500))
	f.Fuzz(func(t *testing.T, data []byte, from, to int64) {
		if from < 0 || to <= from {
			return
		}
		psb := []byte{0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82}
		data = append(append([]byte(nil), psb...), data...)
		w := timerange.Spec{From: timerange.Point{NS: from}, To: timerange.Point{NS: to}, HasFrom: true, HasTo: true}
		in := Input{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
		var out bytes.Buffer
		res, err := Cut(context.Background(), in, &out, Options{Window: w})
		if err != nil {
			return
		}
		a, b := res.InputStart, res.InputEnd
		want := data[max(a, 0):max(a, b, 0)]
		if a == b {
			want = EmptyPT
		}
		if a < 0 || b < a || b > int64(len(data)) || !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("cut of %d bytes is not the input's [%d, %d)", out.Len(), a, b)
		}
		if b > a && a > 0 && !bytes.HasPrefix(data[a:], psb) {
			t.Fatalf("the cut starts at %d, not at a PSB", a)
		}
	})
}
