//go:build linux

package cut

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/intelpt/ptsynth"
	"github.com/iotap/iotap/intelpt/ptsynth/ptsynthtest"
	"github.com/iotap/iotap/internal/timerange"
)

// libiptPacket is one packet as libipt's packet decoder lists it
// (bench/ptpkt listoff): its offset and canonical text.
type libiptPacket struct {
	off  int64
	text string
}

// libiptList decodes the PT file path with libipt (bench/ptpkt, built
// with gcc against libipt-dev) and returns its packets and the offset and
// error it ended with.
func libiptList(t *testing.T, bin, path string) ([]libiptPacket, int64, string) {
	t.Helper()
	out, err := exec.Command(bin, "listoff", path).Output()
	if err != nil {
		t.Fatalf("ptpkt listoff %s: %v", path, err)
	}
	var ps []libiptPacket
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		off, text, _ := strings.Cut(l, " ")
		o, err := strconv.ParseInt(off, 16, 64)
		if err != nil {
			t.Fatalf("ptpkt line %q", l)
		}
		ps = append(ps, libiptPacket{o, text})
	}
	var end int64
	var why string
	if _, err := fmt.Sscanf(lines[len(lines)-1], "end %x", &end); err != nil {
		t.Fatalf("ptpkt's last line %q", lines[len(lines)-1])
	}
	why = strings.SplitN(lines[len(lines)-1], " ", 3)[2]
	return ps, end, why
}

func buildPTPkt(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: the test compiles a test program and bench/ptpkt (libipt)")
	}
	if _, err := os.Stat("/usr/include/intel-pt.h"); err != nil {
		t.Skip("libipt-dev not installed (apt-get install libipt-dev)")
	}
	bin := filepath.Join(t.TempDir(), "ptpkt")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, "../bench/ptpkt/ptpkt.c", "-lipt").CombinedOutput(); err != nil {
		t.Fatalf("building ptpkt: %v\n%s", err, out)
	}
	return bin
}

// writePTCaptureDir writes trace as the thread.pt of an 'iotap pt
// capture' directory of the synthesized run (sideband, binaries), so that
// the flow and calls decoders find the program's code.
func writePTCaptureDir(t *testing.T, dir string, s *ptsynth.Synthesized, trace []byte) string {
	t.Helper()
	p, err := ptsynth.WriteCaptureDir(dir, s, trace)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// flowLines is 'iotap pt flow --offset' of a capture directory's trace:
// ptxed's listing, each line with its trace offset.
func flowLines(t *testing.T, dir string) []string {
	t.Helper()
	in, err := calls.ReadCaptureDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	o := calls.Options{Finder: calls.Finder(t.TempDir(), []string{filepath.Join(dir, intelpt.BinariesDir)})}
	im, _, err := calls.FlowImage(in, 0, 0, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	cfg := intelpt.FlowConfig{Config: in.Config, Image: im}
	m, err := in.Streams[0].Map() // cpuN.pt, read from the file
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := intelpt.FlowListing(&b, m.Data, cfg, intelpt.FlowOptions{Offset: true}); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// callsOf is 'iotap pt calls' of a capture directory: every call, as
// text without its depth (a cut's stack starts at the window).
func callsOf(t *testing.T, dir string) []calls.Call {
	t.Helper()
	in, err := calls.ReadCaptureDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var cs []calls.Call
	o := calls.Options{Finder: calls.Finder(t.TempDir(), []string{filepath.Join(dir, intelpt.BinariesDir)}),
		OnCall: func(c *calls.Call) { cs = append(cs, *c) }}
	if _, err := calls.Analyze(in, o); err != nil {
		t.Fatal(err)
	}
	return cs
}

func callKey(c calls.Call) string {
	return fmt.Sprintf("%d %s %d-%d %s %s insns=%d self=%d", c.Thread, c.Func, c.Begin, c.End, c.Kind, c.EndReason,
		c.EndInsn-c.BeginInsn, c.SelfInsn)
}

// TestCutPT cuts windows of the PT trace of a real program (ptsynth:
// recorded step by step, encoded with a PSB+ every 256 bytes; TSC only in
// the PSB+ headers) and checks with libipt's packet decoder that each cut
// decodes from its start to its end without error and holds exactly the
// original's packets of a run of whole PSB segments, that the packets of
// the original outside it are outside the window (times from libipt's
// TSC packets: the packets of a PSB+ take its TSC) and that its first and
// last segments reach into the window; and that the instruction flow and
// the calls of the cut (as 'iotap pt flow' and 'pt calls' give them, from
// an 'iotap pt capture' directory holding the cut) are those of the
// original for that stretch.
func TestCutPT(t *testing.T) {
	bin := buildPTPkt(t)
	dir := t.TempDir()
	s := ptsynthtest.Prog(t, dir, 48)
	origDir := filepath.Join(dir, "orig")
	origPath := writePTCaptureDir(t, origDir, s, s.Enc.PT)
	orig, end, why := libiptList(t, bin, origPath)
	if end != int64(len(s.Enc.PT)) || why != "reached end of trace stream" {
		t.Fatalf("libipt ends the original at %#x (%s), want its end %#x", end, why, len(s.Enc.PT))
	}
	// the oracle's times: the last TSC, PSB+ packets the TSC of their header
	times := make([]int64, len(orig))
	var psbs []int // indexes of the PSBs
	last := int64(-1)
	for i := 0; i < len(orig); i++ {
		if orig[i].text == "psb" {
			psbs = append(psbs, i)
			j := i
			for j < len(orig) && orig[j].text != "psbend" {
				if tsc, ok := strings.CutPrefix(orig[j].text, "tsc "); ok {
					v, _ := strconv.ParseInt(tsc, 16, 64)
					last = v
				}
				j++
			}
			for k := i; k <= j && k < len(orig); k++ {
				times[k] = last
			}
			i = j
			continue
		}
		times[i] = last
	}
	if len(psbs) < 20 || times[0] < 0 {
		t.Fatalf("%d PSBs, first time %d", len(psbs), times[0])
	}
	start := times[0]
	origFlow := flowLines(t, origDir)
	origCalls := map[string]int{}
	for _, c := range callsOf(t, origDir) {
		origCalls[callKey(c)]++
	}
	psbTime := func(k int) int64 { return times[psbs[k]] }
	rel := func(ns int64) string { return strconv.FormatFloat(float64(ns-start)/1e9, 'f', 9, 64) }
	n := len(psbs)
	windows := [][2]string{
		{rel(psbTime(3)), rel(psbTime(7))},           // PSB times exactly
		{rel(psbTime(5) + 1), rel(psbTime(n/2) - 1)}, // inside segments
		{"", rel(psbTime(4))},                        // from the start
		{rel(psbTime(n - 3)), ""},                    // to the end
		{"@" + strconv.FormatFloat(float64(psbTime(9))/1e9, 'f', 9, 64), "+0.000000300"}, // the trace's own clock
		{rel(psbTime(n-1) + 1000), rel(psbTime(n-1) + 2000)},                             // after the end: empty
	}
	if psbTime(10) == psbTime(11) {
		t.Fatal("PSB times do not advance")
	}
	for _, wdw := range windows {
		t.Run(wdw[0]+".."+wdw[1], func(t *testing.T) {
			spec, err := timerange.ParseSpec(wdw[0], wdw[1])
			if err != nil {
				t.Fatal(err)
			}
			in, closer, err := OpenFile(origPath, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closer.Close()
			var out bytes.Buffer
			res, err := Cut(context.Background(), in, &out, Options{Window: spec})
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != FormatPT {
				t.Fatalf("format %v", res.Format)
			}
			win := res.Window
			a, b := res.InputStart, res.InputEnd
			if b > a && !bytes.Equal(out.Bytes(), s.Enc.PT[a:b]) {
				t.Fatalf("the cut is not the original's bytes [%d, %d)", a, b)
			}
			// which packets of the original are in the window (oracle)
			inWin := 0
			for i, p := range orig {
				inside := (!win.HasFrom || times[i] >= win.From) && (!win.HasTo || times[i] < win.To)
				if inside {
					inWin++
				}
				if inside && (p.off < a || p.off >= b) {
					t.Fatalf("packet %d (%s at %#x, time %d) is in the window %v but not in the cut [%#x, %#x)", i, p.text, p.off, times[i], win, a, b)
				}
			}
			cutPath := writePTCaptureDir(t, filepath.Join(t.TempDir(), "cut"), s, out.Bytes())
			if inWin == 0 {
				// an empty window: a PSB and a PSBEND, which libipt decodes
				if b != a || res.Events != 0 {
					t.Fatalf("no packet in the window, but the cut is [%#x, %#x), %d events", a, b, res.Events)
				}
				got, gend, gwhy := libiptList(t, bin, cutPath)
				if gend != int64(out.Len()) || gwhy != "reached end of trace stream" || len(got) != 2 || got[0].text != "psb" || got[1].text != "psbend" {
					t.Fatalf("libipt decodes the empty cut as %v, ending at %#x (%s)", got, gend, gwhy)
				}
				return
			}
			got, gend, gwhy := libiptList(t, bin, cutPath)
			if gend != b-a || gwhy != "reached end of trace stream" {
				t.Fatalf("libipt ends the cut at %#x (%s), want %#x", gend, gwhy, b-a)
			}
			var want []libiptPacket
			first, lastSeg := -1, -1
			for i, p := range orig {
				if p.off >= a && p.off < b {
					if first < 0 {
						first = i
					}
					lastSeg = i
					want = append(want, libiptPacket{p.off - a, p.text})
				}
			}
			if len(got) != len(want) || int64(res.Events) != int64(len(want)) {
				t.Fatalf("%d packets in the cut (%d counted), %d in the original's [%#x, %#x)", len(got), res.Events, len(want), a, b)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("packet %d: cut %v, original %v", i, got[i], want[i])
				}
			}
			if orig[first].text != "psb" || (b < int64(len(s.Enc.PT)) && orig[lastSeg+1].text != "psb") {
				t.Fatalf("the cut [%#x, %#x) is not whole PSB segments", a, b)
			}
			// the segments at its ends reach into the window
			segEnd := first + 1
			for segEnd < len(orig) && orig[segEnd].text != "psb" {
				segEnd++
			}
			if win.HasFrom && times[segEnd-1] < win.From {
				t.Errorf("the first segment of the cut ends before the window")
			}
			segStart := lastSeg
			for orig[segStart].text != "psb" {
				segStart--
			}
			if win.HasTo && times[segStart] >= win.To {
				t.Errorf("the last segment of the cut starts after the window")
			}

			// the instruction flow: the cut's decoder starts at the first
			// PSB+ (its FUP), the original's went through it; from there on,
			// up to where the cut's trace ends, the lines are the same
			cutFlow := flowLines(t, filepath.Dir(cutPath))
			lineOff := func(l string) int64 {
				o, err := strconv.ParseUint(strings.TrimPrefix(strings.Fields(l)[0], "["), 16, 64)
				if err != nil {
					return 1 << 62 // [end of trace]: no offset
				}
				return int64(o)
			}
			for len(cutFlow) > 0 && strings.HasPrefix(cutFlow[0], "[") {
				cutFlow = cutFlow[1:] // [enabled]: the cut's decoder starts
			}
			if len(cutFlow) == 0 {
				t.Fatal("no flow in the cut")
			}
			o0 := lineOff(cutFlow[0])
			var gotFlow, wantFlow []string
			for _, l := range cutFlow {
				if o := lineOff(l); o < b-a {
					gotFlow = append(gotFlow, l)
				}
			}
			for _, l := range origFlow {
				if o := lineOff(l); o >= a+o0 && o < b {
					_, rest, _ := strings.Cut(l, "  ")
					p := ""
					if strings.HasPrefix(l, "[") {
						p = "["
					}
					wantFlow = append(wantFlow, fmt.Sprintf("%s%016x  %s", p, o-a, rest))
				}
			}
			if len(wantFlow) < 10 || len(gotFlow) != len(wantFlow) {
				t.Fatalf("%d flow lines in the cut, %d in the original's stretch", len(gotFlow), len(wantFlow))
			}
			for i := range gotFlow {
				if gotFlow[i] != wantFlow[i] {
					t.Fatalf("flow line %d: cut %q, original %q", i, gotFlow[i], wantFlow[i])
				}
			}
			// the calls that begin and end inside the cut are the
			// original's
			kept := 0
			for _, c := range callsOf(t, filepath.Dir(cutPath)) {
				if c.Kind == calls.KindRoot || c.EndReason != calls.EndReturn {
					continue
				}
				kept++
				if origCalls[callKey(c)] == 0 {
					t.Errorf("call %s of the cut is not in the original", callKey(c))
				}
			}
			t.Logf("[%#x, %#x): %d packets (%d in the window), %d flow lines, %d calls", a, b, len(got), inWin, len(wantFlow), kept)
		})
	}
}
