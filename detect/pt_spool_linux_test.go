//go:build linux

package detect

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
)

// TestOpenPTSpoolsPerfData: a perf.data on standard input or a named pipe
// is copied to a temporary file and opened from it as a perf.data file
// is (it was read whole into memory): no stream is held, each reads the
// bytes of the file opened by name, the copy is gone from $TMPDIR at
// once, and Close closes it.
func TestOpenPTSpoolsPerfData(t *testing.T) {
	const lib = "../intelpt/testdata/libipt/two-cpus.perf.data"
	perf, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	byName, err := OpenPT(lib, false)
	if err != nil {
		t.Fatal(err)
	}
	defer byName.Close()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	copies := func() (n int) { // descriptors open to a copy
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if p, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.Contains(p, "iotap-perf-data-") {
				n++
			}
		}
		return n
	}
	fifo := mapfiletest.FIFO(t)
	for _, name := range []string{"-", fifo} {
		for _, stream := range []bool{true, false} {
			var in *PTInput
			var err error
			if name == "-" {
				r, w, perr := os.Pipe()
				if perr != nil {
					t.Fatal(perr)
				}
				go func() { w.Write(perf); w.Close() }()
				stdin := os.Stdin
				os.Stdin = r
				in, err = OpenPT("-", stream)
				os.Stdin = stdin
				r.Close()
			} else {
				mapfiletest.FeedFIFO(fifo, perf, 20*time.Second)
				in, err = OpenPT(fifo, stream)
			}
			if err != nil {
				t.Fatalf("%s (stream %v): %v", name, stream, err)
			}
			if in.perf == nil || in.Stream != nil || len(in.Loaded.Streams) != len(byName.Loaded.Streams) || copies() != 1 {
				t.Fatalf("%s (stream %v): not opened from a copy: %d streams, %d copies open", name, stream, len(in.Loaded.Streams), copies())
			}
			for i, s := range in.Loaded.Streams {
				if s.Data != nil {
					t.Errorf("%s (stream %v): stream %d held in memory", name, stream, i)
				}
				got, _ := io.ReadAll(s.Reader())
				want, _ := io.ReadAll(byName.Loaded.Streams[i].Reader())
				if len(want) == 0 || !bytes.Equal(got, want) {
					t.Errorf("%s (stream %v): stream %d: %d bytes, by name %d", name, stream, i, len(got), len(want))
				}
			}
			if in.Config() != byName.Config() {
				t.Errorf("%s (stream %v): config %+v, by name %+v", name, stream, in.Config(), byName.Config())
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("%s (stream %v): %d files left in $TMPDIR", name, stream, len(ents))
			}
			in.Close()
			if n := copies(); n != 0 {
				t.Errorf("%s (stream %v): %d copies open after Close", name, stream, n)
			}
		}
	}
}
