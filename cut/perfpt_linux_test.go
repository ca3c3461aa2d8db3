//go:build linux

package cut

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/intelpt/ptsynth/ptsynthtest"
	"github.com/iotap/iotap/internal/timerange"
)

// perfAttrV7 rewrites the attributes of a perf.data file from ptsynth's
// PERF_ATTR_SIZE_VER8 (136 bytes) to VER7 (128: config3, zero, dropped),
// in place, so that perf 6.1 (Debian 12), which refuses newer
// attributes, reads it. The rest of the file is unchanged.
func perfAttrV7(t *testing.T, b []byte) []byte {
	t.Helper()
	b = bytes.Clone(b)
	le := binary.LittleEndian
	asz, aoff, asize := le.Uint64(b[16:]), le.Uint64(b[24:]), le.Uint64(b[32:])
	if asz != 136+16 {
		return b
	}
	var out []byte
	for o := aoff; o+asz <= aoff+asize; o += asz {
		e := b[o : o+asz]
		a := bytes.Clone(e[:128])
		le.PutUint32(a[4:], 128)
		out = append(append(out, a...), e[asz-16:]...)
	}
	copy(b[aoff:], out)
	le.PutUint64(b[16:], 128+16)
	le.PutUint64(b[32:], uint64(len(out)))
	return b
}

var perfDumpRE = regexp.MustCompile(`(?m)^\.  ([0-9a-f]{8}):  (?:[0-9a-f]{2} )+\s*(.*)$`)

// perfPackets is perf's own dump of the Intel PT of a perf.data file
// (perf script -D): each packet's offset in its AUXTRACE data and text.
func perfPackets(t *testing.T, b []byte) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(p, perfAttrV7(t, b), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("perf", "script", "-D", "-F", "time,event", "-i", p).CombinedOutput()
	if err != nil {
		t.Fatalf("perf script -D: %v: %.300s", err, out)
	}
	var ps []string
	for _, m := range perfDumpRE.FindAllStringSubmatch(string(out), -1) {
		if m[2] != "" {
			ps = append(ps, m[1]+" "+m[2])
		}
	}
	return ps
}

// TestCutPerfDataPT cuts the Intel PT of a perf.data file (a real
// program's run synthesized by ptsynth, a PSB+ every 48 bytes) at five
// windows and checks that: the PT stream of the new perf.data is byte for
// byte the raw cut of the stream (TestCutPT checks that one against
// libipt); perf itself (perf script -D, its Intel PT packet dump) reads
// the new file without error and lists exactly the packets it lists for
// the original's bytes of the cut; every call the cut's 'pt calls' sees
// begin and return is a call of the original; an empty window gives a
// stream of a PSB and a PSBEND; mark: is refused.
func TestCutPerfDataPT(t *testing.T) {
	dir := t.TempDir()
	s := ptsynthtest.Prog(t, dir, 48)
	tr, err := intelpt.PerfDataPT(s.Perf)
	if err != nil || len(tr.Streams) != 1 {
		t.Fatalf("%v, %d streams", err, len(tr.Streams))
	}
	stream := tr.Streams[0].Data
	timing := &PTTiming{Config: tr.Config}
	if tr.TimeConv != nil {
		timing.ToNS = tr.TimeConv.ToNS
	}
	_, perfErr := exec.LookPath("perf")
	var origPkts []string
	if perfErr == nil {
		origPkts = perfPackets(t, s.Perf)
		if len(origPkts) < 100 {
			t.Fatalf("perf lists %d packets of the original", len(origPkts))
		}
	}
	key := func(c calls.Call) string {
		return c.Func + " " + strconv.FormatUint(c.Begin, 10) + "-" + strconv.FormatUint(c.End, 10) + " " + strconv.FormatUint(c.EndInsn-c.BeginInsn, 10)
	}
	callsOf := func(b []byte) []calls.Call {
		in, err := calls.ReadPerfData(b)
		if err != nil {
			t.Fatal(err)
		}
		var cs []calls.Call
		if _, err := calls.Analyze(in, calls.Options{OnCall: func(c *calls.Call) { cs = append(cs, *c) }}); err != nil {
			t.Fatal(err)
		}
		return cs
	}
	origCalls := map[string]bool{}
	for _, c := range callsOf(s.Perf) {
		origCalls[key(c)] = true
	}
	rawIn := Input{Name: "stream", ReaderAt: bytes.NewReader(stream), Size: int64(len(stream)), PT: timing}
	sp, err := scanPT(context.Background(), bytes.NewReader(stream), timing, timerange.Window{}, true)
	if err != nil || !sp.hasFirst {
		t.Fatal(err)
	}
	sec := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 9, 64) }
	last := int64(timing.ns(s.Enc.TSC[len(s.Enc.TSC)-1])) - sp.first
	for _, w := range [][2]string{
		{sec(last / 4), sec(last / 2)},
		{"", sec(last / 8)},
		{sec(last * 3 / 4), ""},
		{"@" + sec(sp.first+last/3), "+" + sec(last/10)},
		{sec(last + 1000), sec(last + 2000)}, // after the end: empty
	} {
		t.Run(w[0]+".."+w[1], func(t *testing.T) {
			spec, err := timerange.ParseSpec(w[0], w[1])
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			in := Input{Name: "perf.data", ReaderAt: bytes.NewReader(s.Perf), Size: int64(len(s.Perf))}
			res, err := Cut(context.Background(), in, &out, Options{Window: spec})
			if err != nil || res.Format != FormatPerfPT {
				t.Fatal(err, res.Format)
			}
			var raw bytes.Buffer
			rres, err := Cut(context.Background(), rawIn, &raw, Options{Window: spec})
			if err != nil {
				t.Fatal(err)
			}
			ctr, err := intelpt.PerfDataPT(out.Bytes())
			if err != nil || len(ctr.Streams) != 1 {
				t.Fatalf("the cut perf.data: %v, %d streams", err, len(ctr.Streams))
			}
			if !bytes.Equal(ctr.Streams[0].Data, raw.Bytes()) || res.Events != rres.Events {
				t.Fatalf("the cut's stream (%d bytes, %d packets) is not the raw cut [%d, %d) (%d bytes, %d packets)",
					len(ctr.Streams[0].Data), res.Events, rres.InputStart, rres.InputEnd, raw.Len(), rres.Events)
			}
			empty := rres.InputStart == rres.InputEnd
			if empty != (w[0] == sec(last+1000)) {
				t.Fatalf("empty %v", empty)
			}
			if perfErr == nil {
				got := perfPackets(t, out.Bytes())
				t.Logf("perf lists %d packets of the cut", len(got))
				var want []string
				if empty {
					want = []string{"00000000 PSB", "00000010 PSBEND"}
				}
				for _, p := range origPkts {
					o, _ := strconv.ParseInt(p[:8], 16, 64)
					if !empty && o >= rres.InputStart && o < rres.InputEnd {
						want = append(want, strconv.FormatInt(o-rres.InputStart+1<<32, 16)[1:]+p[8:])
					}
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("perf lists %d packets in the cut, %d in the original's [%#x, %#x)", len(got), len(want), rres.InputStart, rres.InputEnd)
					for i := 0; i < len(got) && i < len(want); i++ {
						if got[i] != want[i] {
							t.Fatalf("packet %d: %q, original %q", i, got[i], want[i])
						}
					}
				}
			}
			kept := 0
			for _, c := range callsOf(out.Bytes()) {
				if c.Kind == calls.KindRoot || c.EndReason != calls.EndReturn {
					continue
				}
				kept++
				if !origCalls[key(c)] {
					t.Errorf("call %s of the cut is not in the original", key(c))
				}
			}
			if !empty && kept == 0 {
				t.Error("no call of the cut returns")
			}
			t.Logf("[%#x, %#x): %d packets, %d calls", rres.InputStart, rres.InputEnd, res.Events, kept)
		})
	}
	spec, _ := timerange.ParseSpec("mark:x", "")
	if _, err := CutPerfDataPT(context.Background(), s.Perf, spec, &bytes.Buffer{}); err == nil {
		t.Error("mark: accepted")
	}
}
