package calls

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// rawCallInput is libipt's call_direct-ret_compressed test: a direct call
// and its return over 3 instructions (ptxed lists 0x100000, 0x100008,
// 0x100005).
func rawCallInput(t *testing.T) (*Input, *intelpt.Image) {
	im := intelpt.NewImage()
	if _, err := im.AddRaw("../testdata/libipt/call_direct-ret_compressed.bin:0x100000"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	return RawInput(b, intelpt.Config{}), im
}

// TestRun: every output form of the same analysis: NDJSON has the input
// record and one object per call; the folded stacks' weights add up to
// the 3 instructions ptxed lists; the tree names the call; none writes
// nothing.
func TestRun(t *testing.T) {
	in, im := rawCallInput(t)
	if in.TraceBytes() != int64(len(in.Streams[0].Data)) {
		t.Errorf("TraceBytes %d", in.TraceBytes())
	}
	var w bytes.Buffer
	res, err := Run(&w, in, "x.pt", OutputJSON, Options{Image: im})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], `{"kind":"input"`) || !strings.Contains(lines[0], `"file":"x.pt"`) || uint64(len(lines)-1) != res.Stats.Calls+1 || res.Stats.Insns != 3 {
		t.Errorf("NDJSON, %d calls, %d insns:\n%s", res.Stats.Calls, res.Stats.Insns, w.String())
	}
	w.Reset()
	if _, err := Run(&w, in, "x.pt", OutputFolded, Options{Image: im}); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, l := range strings.Split(strings.TrimSpace(w.String()), "\n") {
		n, err := strconv.Atoi(l[strings.LastIndexByte(l, ' ')+1:])
		if err != nil {
			t.Fatalf("folded line %q", l)
		}
		sum += n
	}
	if sum != 3 {
		t.Errorf("folded weights add up to %d, want 3:\n%s", sum, w.String())
	}
	w.Reset()
	if _, err := Run(&w, in, "x.pt", OutputTree, Options{Image: im}); err != nil || !strings.Contains(w.String(), "0x100008") {
		t.Errorf("tree %v:\n%s", err, w.String())
	}
	w.Reset()
	if res, err := Run(&w, in, "x.pt", OutputNone, Options{Image: im}); err != nil || res == nil || w.Len() != 0 {
		t.Errorf("none: %v, %d bytes", err, w.Len())
	}
}

// TestOpenFlow: a perf.data of two streams needs one chosen; the chosen
// stream's process must have mappings; a file without sideband and a
// missing one are told apart.
func TestOpenFlow(t *testing.T) {
	const perf = "../testdata/libipt/two-cpus.perf.data"
	var se *StreamsError
	if _, err := OpenFlow(perf, FlowOptions{Stream: -1}); !errors.As(err, &se) || se.Streams != 2 {
		t.Errorf("no stream chosen: %v", err)
	}
	if _, err := OpenFlow(perf, FlowOptions{Stream: 1, PID: 7}); err == nil || !strings.Contains(err.Error(), "no mappings of process 7") {
		t.Errorf("stream 1, pid 7: %v", err)
	}
	if _, err := OpenFlow("../testdata/libipt/ovf.pt", FlowOptions{Stream: -1}); !errors.Is(err, ErrNoSideband) {
		t.Errorf("raw trace: %v", err)
	}
	if _, err := OpenFlow("../testdata/libipt/nosuch.pt", FlowOptions{Stream: -1}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
