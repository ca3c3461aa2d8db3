package cut

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// go test -run '^$' -bench . ./cut: index building and a 1 s cut of a
// 20 MB mmiotrace log (400 s) with and without the index.
func BenchmarkBuildIndex(b *testing.B) {
	data := bigMMIO(b, 40)
	in := Input{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := BuildIndex(context.Background(), in, DefaultInterval); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCut(b *testing.B, indexed bool) {
	data := bigMMIO(b, 40)
	in := Input{ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
	if indexed {
		ix, err := BuildIndex(context.Background(), in, 256<<10)
		if err != nil {
			b.Fatal(err)
		}
		in.Index = ix
	}
	spec, _ := timerange.ParseSpec("200", "201")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		res, err := Cut(context.Background(), in, io.Discard, Options{Window: spec})
		if err != nil || res.Indexed != indexed {
			b.Fatal(err)
		}
	}
}

func BenchmarkCutIndexed(b *testing.B) { benchCut(b, true) }
func BenchmarkCutFull(b *testing.B)    { benchCut(b, false) }
