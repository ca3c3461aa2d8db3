package cut

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// BenchmarkWriteIndexed and BenchmarkWritePlain write the 20 MB log to a
// file in 256 KiB writes (a capture's buffer) with and without an
// IndexWriter: the cost of indexing while recording (CPU: compare with
// -benchtime and /usr/bin/time, the indexer runs on its own goroutine).
func benchWrite(b *testing.B, indexed bool) {
	data := bigMMIO(b, 40)
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		n++
		path := filepath.Join(dir, fmt.Sprintf("w%d.log", n))
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		var w io.Writer = f
		var iw *IndexWriter
		if indexed {
			if iw, err = NewIndexWriter(f, path, FormatMMIO, IndexWriterOptions{}); err != nil {
				b.Fatal(err)
			}
			w = iw
		}
		for off := 0; off < len(data); off += 256 << 10 {
			if _, err := w.Write(data[off:min(off+256<<10, len(data))]); err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
		if iw != nil {
			if err := iw.Close(); err != nil {
				b.Fatal(err)
			}
		}
		os.Remove(path)
		os.Remove(path + IndexSuffix)
	}
}

func BenchmarkWriteIndexed(b *testing.B) { benchWrite(b, true) }
func BenchmarkWritePlain(b *testing.B)   { benchWrite(b, false) }
