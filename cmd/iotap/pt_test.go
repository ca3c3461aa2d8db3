package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

const ptCorpus = "../../../shared/testdata/intelpt-libipt"

func ptRun(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

// ptNormalize compares like diff -b.
func ptNormalize(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(out, "\n")
}

// TestPTDumpLibiptCorpus runs `iotap pt dump` with each test's ptdump options
// from MANIFEST.tsv on all of libipt's corpus and compares with the
// expected ptdump output.
func TestPTDumpLibiptCorpus(t *testing.T) {
	f, err := os.Open(filepath.Join(ptCorpus, "MANIFEST.tsv"))
	if err != nil {
		t.Skipf("libipt corpus not available: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, pass := 0, 0
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		name := fs[0]
		args := []string{"pt", "dump", "--allow-loss"} // the corpus lists bad packets on purpose
		if fs[1] != "-" {
			args = append(args, "--cpu", fs[1])
		}
		if fs[3] != "-" {
			args = append(args, strings.Fields(fs[3])...)
		}
		args = append(args, filepath.Join(ptCorpus, name+".pt"))
		n++
		ok := t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(ptCorpus, name+"-ptdump.exp"))
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := ptRun(t, args...)
			if err != nil {
				t.Fatalf("iotap %s: %v", strings.Join(args, " "), err)
			}
			if ptNormalize(out) != ptNormalize(string(want)) {
				t.Errorf("iotap %s:\n--- got\n%s--- want\n%s", strings.Join(args, " "), out, want)
			}
		})
		if ok {
			pass++
		}
	}
	if n != 230 {
		t.Errorf("manifest lists %d tests, want 230", n)
	}
	t.Logf("iotap pt dump matches ptdump on %d of %d libipt tests", pass, n)
}

func TestPTDumpErrors(t *testing.T) {
	dir := t.TempDir()
	// A PSB, a TSC cut short: the trace ends inside a packet.
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	buf := append(e.Bytes(), 0x19, 1, 2)
	p := filepath.Join(dir, "cut.pt")
	os.WriteFile(p, buf, 0o600)
	out, _, err := ptRun(t, "pt", "dump", p)
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != exitDataLost || !strings.Contains(out, "psbend") {
		t.Fatalf("truncated trace: err %v, out %q", err, out)
	}
	if _, _, err := ptRun(t, "pt", "dump", "--allow-loss", p); err != nil {
		t.Fatalf("--allow-loss: %v", err)
	}
	if _, _, err := ptRun(t, "pt", "dump", "--time", "--tcal", p); !errors.As(err, &ce) || ce.code != exitUsage {
		t.Fatalf("--time --tcal: %v", err)
	}
	if _, _, err := ptRun(t, "pt", "dump", "--cpu", "x", p); !errors.As(err, &ce) || ce.code != exitUsage {
		t.Fatalf("--cpu x: %v", err)
	}
}

func TestPTDumpJSON(t *testing.T) {
	pt := filepath.Join(ptCorpus, "fup-tip.pt")
	if _, err := os.Stat(pt); err != nil {
		t.Skip("libipt corpus not available")
	}
	out, _, err := ptRun(t, "pt", "dump", "--json", pt)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 9 || !strings.HasPrefix(lines[0], `{"kind":"input","schema":1,"source":"pt","file":"`) || !strings.HasSuffix(lines[0], `","format":"raw Intel PT","clock":null}`) {
		t.Fatalf("%d records, want the input record and 8 packets:\n%s", len(lines), out)
	}
	var o struct {
		Kind   string `json:"kind"`
		Offset int64  `json:"offset"`
		Packet string `json:"packet"`
		IP     string `json:"ip"`
	}
	if err := json.Unmarshal([]byte(lines[5]), &o); err != nil {
		t.Fatal(err)
	}
	if o.Kind != "pt_packet" || o.Offset != 0x1b || o.Packet != "fup" || o.IP != "0x1002" {
		t.Fatalf("line 6: %+v", o)
	}
}

// ptPerfData builds a synthetic perf.data (file mode) holding the PT data
// of two CPUs in PERF_RECORD_AUXTRACE records and an intel_pt
// AUXTRACE_INFO; it is how `perf record -e intel_pt//` lays out a file.
func ptPerfData(cpus map[uint32][]byte, auxFlags uint64) []byte {
	le := binary.LittleEndian
	var data []byte
	rec := func(typ uint32, body, extra []byte) {
		h := make([]byte, 8)
		le.PutUint32(h, typ)
		le.PutUint16(h[6:], uint16(8+len(body)))
		data = append(append(append(data, h...), body...), extra...)
	}
	info := make([]byte, 8+17*8)
	le.PutUint32(info, 1) // PERF_AUXTRACE_INTEL_PT
	rec(70, info, nil)
	for cpu := uint32(0); cpu < 8; cpu++ {
		b, ok := cpus[cpu]
		if !ok {
			continue
		}
		body := make([]byte, 40)
		le.PutUint64(body, uint64(len(b)))
		le.PutUint32(body[32:], cpu)
		rec(71, body, b)
	}
	if auxFlags != 0 {
		body := make([]byte, 24)
		le.PutUint64(body[16:], auxFlags)
		rec(11, body, nil)
	}
	h := make([]byte, 104)
	copy(h, "PERFILE2")
	le.PutUint64(h[8:], 104)
	le.PutUint64(h[40:], 104)
	le.PutUint64(h[48:], uint64(len(data)))
	return append(h, data...)
}

func TestPTPerfData(t *testing.T) {
	var a, b intelpt.Encoder
	a.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	a.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCFull, Payload: 0x401000})
	b.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	b.Encode(intelpt.Packet{Kind: intelpt.KindOVF})
	dir := t.TempDir()
	p := filepath.Join(dir, "perf.data")
	os.WriteFile(p, ptPerfData(map[uint32][]byte{0: a.Bytes(), 3: b.Bytes()}, 0), 0o600)
	// cpu 3's OVF is loss: exit 3 naming it, the listing written
	out, _, err := ptRun(t, "pt", "dump", p)
	var oe *codeError
	if !errors.As(err, &oe) || oe.code != exitDataLost || !strings.Contains(err.Error(), "cpu 3: 1 overflow(s)") {
		t.Fatalf("an OVF in cpu 3: %v", err)
	}
	want := "# cpu 0: 25 bytes\n0000000000000000 psb\n0000000000000010 fup 6: 0000000000401000\n# cpu 3: 18 bytes\n0000000000000000 psb\n0000000000000010 ovf"
	if ptNormalize(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	out, _, err = ptRun(t, "pt", "dump", "--allow-loss", "--stream", "3", p)
	if err != nil || strings.Contains(out, "fup") || !strings.Contains(out, "ovf") {
		t.Fatalf("--stream 3: %v\n%s", err, out)
	}
	// perf recorded a truncated AUX buffer: exit 3.
	os.WriteFile(p, ptPerfData(map[uint32][]byte{0: a.Bytes()}, intelpt.AuxFlagTruncated), 0o600)
	var ce *codeError
	if _, _, err := ptRun(t, "pt", "dump", p); !errors.As(err, &ce) || ce.code != exitDataLost {
		t.Fatalf("truncated AUX: %v", err)
	}
	// The file itself cut inside the AUXTRACE data (perf killed): pt dump and
	// pt stats decode what is there and exit 3 naming the cut; with
	// --allow-loss they exit 0.
	full := ptPerfData(map[uint32][]byte{0: a.Bytes()}, 0)
	os.WriteFile(p, full[:len(full)-5], 0o600)
	for _, verb := range []string{"dump", "stats"} {
		out, stderr, err := ptRun(t, "pt", verb, p)
		if !errors.As(err, &ce) || ce.code != exitDataLost || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("pt %s on a cut perf.data: %v (stderr %q)", verb, err, stderr)
		}
		if !strings.Contains(strings.ToLower(out), "psb") {
			t.Errorf("pt %s on a cut perf.data printed no PSB:\n%s", verb, out)
		}
		if _, _, err := ptRun(t, "pt", verb, "--allow-loss", p); err != nil {
			t.Errorf("pt %s --allow-loss on a cut perf.data: %v", verb, err)
		}
	}
}

func TestPTStats(t *testing.T) {
	var e intelpt.Encoder
	for i := 0; i < 3; i++ {
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: uint64(1000 * (i + 1))})
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		for j := 0; j <= i; j++ {
			e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 3, Payload: 5})
		}
	}
	e.Encode(intelpt.Packet{Kind: intelpt.KindOVF})
	p := filepath.Join(t.TempDir(), "s.pt")
	os.WriteFile(p, e.Bytes(), 0o600)
	out, _, err := ptRun(t, "pt", "stats", "--json", p)
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != exitDataLost {
		t.Fatalf("overflow not reported as loss: %v", err)
	}
	lines := strings.SplitN(out, "\n", 2)
	if want := `{"kind":"input","schema":1,"source":"pt","file":` + strconv.Quote(p) + `,"format":"raw Intel PT","clock":null}`; lines[0] != want {
		t.Fatalf("input record %s, want %s", lines[0], want)
	}
	var s struct {
		Kind                     string
		Stream                   string
		Packets, PSBs, Overflows int64
		PSBGapMin                int64 `json:"psb_gap_min"`
		PSBGapMax                int64 `json:"psb_gap_max"`
		Kinds                    map[string]int64
		FirstTSC                 *uint64 `json:"first_tsc"`
		LastTSC                  *uint64 `json:"last_tsc"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &s); err != nil {
		t.Fatal(err)
	}
	// PSB+TSC+PSBEND = 26 bytes, then 1, 2, 3 TNTs.
	if s.Kind != "pt_stats" || s.Stream != p || s.Packets != 16 || s.PSBs != 3 || s.PSBGapMin != 27 || s.PSBGapMax != 28 || s.Overflows != 1 ||
		s.Kinds["tnt.8"] != 6 || s.FirstTSC == nil || *s.FirstTSC != 1000 || *s.LastTSC != 3000 {
		t.Fatalf("stats %+v", s)
	}
	if out, _, err := ptRun(t, "pt", "stats", "--allow-loss", p); err != nil || !strings.Contains(out, "overflows      1") {
		t.Fatalf("text stats: %v\n%s", err, out)
	}
}

func TestPTCaptureNotSupported(t *testing.T) {
	if _, err := os.Stat(intelpt.PMUDir); err == nil {
		t.Skip("this machine has the intel_pt PMU")
	}
	dir := filepath.Join(t.TempDir(), "out")
	_, _, err := ptRun(t, "pt", "capture", "-o", dir, "--cpu", "0", "--duration", "10ms")
	if !errors.Is(err, intelpt.ErrNotSupported) || !strings.Contains(err.Error(), "Intel PT needs an Intel CPU with the intel_pt PMU") {
		t.Fatalf("capture on a machine without PT: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("output dir created on failure: %v", err)
	}
	var ce *codeError
	if _, _, err := ptRun(t, "pt", "capture", "--cpu", "0"); !errors.As(err, &ce) || ce.code != exitUsage {
		t.Fatalf("missing -o: %v", err)
	}
	if _, _, err := ptRun(t, "pt", "capture", "-o", dir, "--cpu", "0", "--pid", "1"); !errors.As(err, &ce) || ce.code != exitUsage {
		t.Fatalf("--cpu and --pid: %v", err)
	}
}

func TestPTDumpRangeAndJSONLastIP(t *testing.T) {
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x401000})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCUpdate16, Payload: 0x2000})
	p := filepath.Join(t.TempDir(), "r.pt")
	os.WriteFile(p, e.Bytes(), 0o600)
	// The last IP is reset to 0 at PSB: the second FUP's 16-bit update
	// gives 0x2000, not 0x402000.
	out, _, err := ptRun(t, "pt", "dump", "--json", p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.Contains(lines[2], `"ip":"0x401000"`) || !strings.Contains(lines[4], `"ip":"0x2000"`) {
		t.Fatalf("json:\n%s", out)
	}
	// FILE:FROM-TO: only the second PSB and FUP, offsets from FROM.
	out, _, err = ptRun(t, "pt", "dump", p+":0x17-0x2a")
	if err != nil {
		t.Fatal(err)
	}
	if ptNormalize(out) != "0000000000000000 psb\n0000000000000010 fup 1: ????????????2000" {
		t.Fatalf("range:\n%s", out)
	}
}

func TestPTDumpCancelled(t *testing.T) {
	var e intelpt.Encoder
	for i := 0; i < 1000; i++ {
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	}
	p := filepath.Join(t.TempDir(), "c.pt")
	os.WriteFile(p, e.Bytes(), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"pt", "dump", p}, &out, &errb)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled dump: %v (%d bytes out)", err, out.Len())
	}
}

// TestPTSidecarConfig: a file written by 'iotap pt capture' is dumped with
// the timing parameters of the capture.json next to it.
func TestPTSidecarConfig(t *testing.T) {
	dir := t.TempDir()
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: 0x1000})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTMA, Payload: 0x10, Aux: 0})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	e.Encode(intelpt.Packet{Kind: intelpt.KindMTC, Payload: 0x3})
	os.WriteFile(filepath.Join(dir, "cpu0.pt"), e.Bytes(), 0o600)
	dump := func() string {
		out, _, err := ptRun(t, "pt", "dump", "--time", "--time-delta", filepath.Join(dir, "cpu0.pt"))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// Without parameters the MTC gives no time ("bad configuration").
	if out := dump(); !strings.Contains(out, "bad configuration") {
		t.Fatalf("without capture.json:\n%s", out)
	}
	sc := `{"tool":"iotap","mtc_freq":3,"cpuid_0x15_eax":1,"cpuid_0x15_ebx":2,"buffers":[{"file":"cpu0.pt"}]}`
	os.WriteFile(filepath.Join(dir, "capture.json"), []byte(sc), 0o600)
	// The MTC's CTC is 3<<3 = 24: 8 crystal ticks after the TMA's 0x10,
	// 16 (0x10) TSC ticks at a TSC/crystal ratio of 2.
	out := dump()
	if strings.Contains(out, "bad configuration") || !strings.Contains(ptNormalize(out), "mtc 3 tsc +10") {
		t.Fatalf("with capture.json:\n%s", out)
	}
}

func TestPTDumpJSONTime(t *testing.T) {
	dir := t.TempDir()
	var e intelpt.Encoder
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: 0x1000})
	e.Encode(intelpt.Packet{Kind: intelpt.KindTMA, Payload: 0x10})
	e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	e.Encode(intelpt.Packet{Kind: intelpt.KindMTC, Payload: 3})
	p := filepath.Join(dir, "t.pt")
	os.WriteFile(p, e.Bytes(), 0o600)
	out, _, err := ptRun(t, "pt", "dump", "--json", "--mtc-freq", "3", "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "2", p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// 8 crystal ticks after the TMA at ratio 2: 0x1000 + 16.
	if len(lines) != 6 || !strings.HasSuffix(lines[5], `"est_tsc":4112}`) || strings.Count(lines[2], `"tsc":`) != 1 || strings.Contains(lines[2], "est_tsc") {
		t.Fatalf("json:\n%s", out)
	}
}

// TestPTCallsEmptyRaw: pt calls on an empty raw trace says what pt flow
// says of it and exits 1; it listed an empty tree, "0 instructions", exit
// 0.
func TestPTCallsEmptyRaw(t *testing.T) {
	code := "../../intelpt/testdata/libipt/call_direct-ret_compressed.bin:0x100000"
	empty := filepath.Join(t.TempDir(), "EMPTY")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := "iotap: pt %s: " + empty + ": not an Intel PT trace: empty (the input has no bytes)\n"
	for _, args := range [][]string{{"pt", "calls", "--raw", code, empty}, {"pt", "flow", "--raw", code, "--pt", empty}} {
		stdout, stderr, rc := runUSB(t, args...)
		if rc != exitFailure || stdout != "" || stderr != fmt.Sprintf(want, args[1]) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), rc, stdout, stderr)
		}
	}
}
