package export

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// TestPageCodecMatchesParquetGo: pageCodec compresses to the bytes of
// parquet-go's own zstd.Codec at SpeedFastest (the codec the exporter
// used before), for pages of every size around its thresholds (a zstd
// block, the small window, the frame's minimum window) and of data that
// compresses well, badly and not at all; and each decodes back.
func TestPageCodecMatchesParquetGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ref := &zstd.Codec{Level: zstd.SpeedFastest}
	c := newPageCodec()
	kinds := map[string]func(n int) []byte{
		"random": func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			return b
		},
		"text": func(n int) []byte {
			words := []string{"GET_DESCRIPTOR ", "SET_CONFIGURATION ", "ok ", "stall ", "0x0000fe01 ", "bulk ", "\x00\x01"}
			var b []byte
			for len(b) < n {
				b = append(b, words[r.IntN(len(words))]...)
			}
			return b[:n]
		},
		"counters": func(n int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(i / 8 * 3)
			}
			return b
		},
		// long repeats, far apart: matches beyond the small window
		"far repeats": func(n int) []byte {
			b := make([]byte, n)
			block := make([]byte, 3<<19)
			for i := range block {
				block[i] = byte(r.Uint32())
			}
			for i := 0; i < n; i += copy(b[i:], block) {
			}
			return b
		},
	}
	sizes := []int{0, 1, 100, 1023, 1024, 1025, 4096, 128<<10 - 1, 128 << 10, 128<<10 + 1, 300 << 10,
		smallWindow - 1, smallWindow, smallWindow + 1, 3 << 20}
	for name, gen := range kinds {
		for _, n := range sizes {
			src := gen(n)
			want, err := ref.Encode(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Encode(make([]byte, 7), src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %d bytes: %d bytes compressed, parquet-go's codec %d (or other bytes)", name, n, len(got), len(want))
			}
			back, err := c.Decode(nil, got)
			if err != nil || !bytes.Equal(back, src) {
				t.Errorf("%s, %d bytes: decoded %d bytes (%v), not the page", name, n, len(back), err)
			}
		}
	}
}

// TestPageFilesMatchMemory: a table written with its pages held in
// temporary files (pageFiles) has the bytes parquet-go writes with its
// pages in memory (its default), over several row groups; the page files
// leave no name in the output directory, during the write or after.
func TestPageFilesMatchMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	id := Identity{Host: "lab1", BootID: "b-1", KernelRelease: "6.12", CaptureID: "0123456789abcdef", SourceFile: "cap/mmio.log", ClockDomain: "trace-local"}
	rows := randomRows[MMIOMapRow](r, 20000, id)
	x := &Exporter{opt: Options{RowGroupRows: 7000, IotapVersion: "test"}}
	var ref bytes.Buffer
	w := parquet.NewGenericWriter[MMIOMapRow](&ref, x.writerOptions(TableMMIOMaps)...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	x, err := New(Options{Dir: dir, RowGroupRows: 7000, IotapVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := openTable[MMIOMapRow](x, TableMMIOMaps, &capture{id: id}, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		if err := tb.add(row); err != nil {
			t.Fatal(err)
		}
		if i == 10000 { // mid row group: pages buffered
			if names := pageNames(t, dir); len(names) > 0 {
				t.Errorf("page files visible while writing: %v", names)
			}
		}
	}
	if err := tb.commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(x.Files()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, ref.Bytes()) {
		t.Errorf("file of %d bytes, parquet-go with pages in memory writes %d (or other bytes)", len(got), ref.Len())
	}
	if names := pageNames(t, dir); len(names) > 0 {
		t.Errorf("page files left: %v", names)
	}
}

// pageNames lists the page files' names under dir.
func pageNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-pages-") {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
