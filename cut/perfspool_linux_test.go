//go:build linux

package cut

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// TestCutPerfDataCompressedSpooled: a perf.data without ReaderAt (a
// compressed file: Input.Open) is decompressed into a temporary file and
// cut from it as a file is (it was read whole into memory): the same
// bytes and result as the file given with ReaderAt, with and without a
// window; the copy is open while the cut is written, and nothing is left
// in $TMPDIR.
func TestCutPerfDataCompressedSpooled(t *testing.T) {
	b, err := os.ReadFile("../intelpt/testdata/libipt/two-cpus.perf.data")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	window, err := timerange.ParseSpec("0", "1000000")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []timerange.Spec{{}, window} {
		var want bytes.Buffer
		got := &copyWatch{}
		wres, werr := Cut(context.Background(), Input{Name: "perf.data", ReaderAt: bytes.NewReader(b), Size: int64(len(b))}, &want, Options{Window: spec})
		gres, gerr := Cut(context.Background(), Input{Name: "perf.data", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b)), nil
		}}, got, Options{Window: spec})
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("window %+v: error %v, with ReaderAt %v", spec, gerr, werr)
		}
		if werr != nil {
			continue
		}
		if want.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("window %+v: %d bytes, with ReaderAt %d", spec, got.Len(), want.Len())
		}
		if !got.spooled {
			t.Errorf("window %+v: no temporary copy open while the cut was written (read into memory)", spec)
		}
		if gres.Kept != wres.Kept || gres.Events != wres.Events || gres.Window != wres.Window || gres.Lost != wres.Lost {
			t.Errorf("window %+v: result %+v, with ReaderAt %+v", spec, *gres, *wres)
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("window %+v: %d files left in $TMPDIR", spec, len(ents))
		}
	}
}

// copyWatch is a buffer that notes whether a temporary copy of cut's
// (iotap-cut-*) is open when it is written to.
type copyWatch struct {
	bytes.Buffer
	spooled bool
}

func (w *copyWatch) Write(p []byte) (int, error) {
	if !w.spooled {
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.Contains(l, "iotap-cut-") {
				w.spooled = true
			}
		}
	}
	return w.Buffer.Write(p)
}
