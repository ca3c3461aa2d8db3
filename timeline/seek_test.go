package timeline

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

// TestWindowSeeksWithIndex exports a one-second window of a 12 MB
// mmiotrace log (the lab's e1000 probe repeated, a "Lost 7 events." mark
// inside the window) with the log's index and without it: the Perfetto
// files are byte for byte the same, the loss is in both, and with the
// index the bytes read are at most the window's bytes (counted from the
// log's text) plus two checkpoint intervals plus the readers' first
// buffers, where without it everything before the window is read. An
// index made before the log changed is ignored with a warning, and the
// output is still the same.
func TestWindowSeeksWithIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 12 MB log")
	}
	dir := t.TempDir()
	path := dir + "/big.log"
	kinds, times := bigMMIOLog(t, path, 24, 12)
	const interval = 512 << 10
	in, closer, err := cut.OpenFile(path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := cut.BuildIndex(context.Background(), in, interval)
	closer.Close()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ix.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	writeIndex := func() {
		if err := os.WriteFile(path+cut.IndexSuffix, idx, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The window holds the loss, half a second after its start.
	var lostAt int64
	for i, k := range kinds {
		if k == "LOST" {
			lostAt = times[i] - times[0]
		}
	}
	from := (time.Duration(lostAt) - 500*time.Millisecond).Truncate(time.Millisecond)
	t.Logf("loss at %v, window from %v", time.Duration(lostAt), from)
	spec, err := timerange.ParseSpec(from.String(), "+1s")
	if err != nil {
		t.Fatal(err)
	}
	// The window's bytes and the bytes before it, from the log's text.
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := times[0]+int64(from), times[0]+int64(from+time.Second)
	var winStart, winEnd, off int64 = -1, 0, 0
	for _, l := range strings.SplitAfter(string(text), "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && (f[0] == "R" || f[0] == "W" || f[0] == "MARK") {
			ts := f[2]
			if f[0] == "MARK" {
				ts = f[1]
			}
			ns := parseNS(t, ts)
			if ns >= lo && ns < hi {
				if winStart < 0 {
					winStart = off
				}
				winEnd = off + int64(len(l))
			}
		}
		off += int64(len(l))
	}
	if winStart < 4<<20 {
		t.Fatalf("the window starts at byte %d: want one well inside the log", winStart)
	}

	export := func() ([]byte, *Stats) {
		var buf bytes.Buffer
		st, err := Export(context.Background(), &buf, []string{path}, Options{Window: spec})
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), st
	}
	writeIndex()
	withIdx, stIdx := export()
	os.Remove(path + cut.IndexSuffix)
	noIdx, stNo := export()
	if !bytes.Equal(withIdx, noIdx) {
		t.Errorf("the window read through the index differs: %d bytes, %d from the start", len(withIdx), len(noIdx))
	}
	a, b := stIdx.Inputs[0], stNo.Inputs[0]
	if !a.Seeked || b.Seeked {
		t.Errorf("seeked with the index %v, without %v", a.Seeked, b.Seeked)
	}
	if a.Lost != 7 || b.Lost != 7 || a.Events != b.Events || a.Events == 0 {
		t.Errorf("lost %d/%d, events %d/%d", a.Lost, b.Lost, a.Events, b.Events)
	}
	bound := (winEnd - winStart) + 2*interval + 1<<20
	t.Logf("window %d bytes at %d; read %d with the index (bound %d), %d without", winEnd-winStart, winStart, a.BytesRead, bound, b.BytesRead)
	if a.BytesRead > bound {
		t.Errorf("read %d bytes with the index, more than the window's %d + two intervals + 1 MiB", a.BytesRead, winEnd-winStart)
	}
	if b.BytesRead < winStart {
		t.Errorf("read %d bytes without the index, less than the %d before the window", b.BytesRead, winStart)
	}

	// A stale index: same size, another modification time.
	writeIndex()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	stale, stStale := export()
	if !bytes.Equal(stale, noIdx) || stStale.Inputs[0].Seeked {
		t.Errorf("a stale index changed the output or was used (seeked %v)", stStale.Inputs[0].Seeked)
	}
	if !strings.Contains(strings.Join(stStale.Warnings, "\n"), "index ignored") {
		t.Errorf("no warning about the stale index: %q", stStale.Warnings)
	}
}
