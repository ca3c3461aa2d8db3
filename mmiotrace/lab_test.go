package mmiotrace_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
	"github.com/iotap/iotap/mmiotrace"
)

// TestLabCaptureE1000 captures the e1000 driver's probe in the lab VM with
// iotap mmio capture --bind and checks the log the real kernel wrote.
func TestLabCaptureE1000(t *testing.T) {
	script := fmt.Sprintf(`
rc=0; iotap mmio capture --bind %[1]s --mark "iotap lab: before bind" -o /out/e1000.log 2>/out/capture.err || rc=$?
echo $rc > /out/capture.rc
rc=0; iotap mmio capture --bind %[1]s --buffer-kb 4 -o /out/tiny.log 2>/out/tiny.err || rc=$?
echo $rc > /out/tiny.rc
rc=0; iotap mmio replay --dry-run /out/e1000.log > /out/replay.txt 2>/out/replay.err || rc=$?
echo $rc > /out/replay.rc
cat /sys/kernel/tracing/current_tracer > /out/tracer.after
ls /sys/bus/pci/devices/%[1]s/driver/ > /dev/null && echo bound > /out/bound.after
# Replay onto the real BAR: write RAL0 (0x5400), read it back twice, the
# second time expecting a wrong value.
grep -E '^(VERSION|PCIDEV)' /out/e1000.log > /tmp/r.log
echo "W 4 1.000000 1 0xfebc5400 0x12345678 0x0 0" >> /tmp/r.log
echo "R 4 1.000001 1 0xfebc5400 0x12345678 0x0 0" >> /tmp/r.log
echo "R 4 1.000002 1 0xfebc5400 0x87654321 0x0 0" >> /tmp/r.log
rc=0; iotap mmio replay --device %[1]s /tmp/r.log 2>/out/replay-bound.err || rc=$?
echo $rc > /out/replay-bound.rc
echo %[1]s > /sys/bus/pci/drivers/e1000/unbind
rc=0; iotap mmio replay --device %[1]s --check-reads /tmp/r.log >/out/replay-real.txt 2>/out/replay-real.err || rc=$?
echo $rc > /out/replay-real.rc
`, vmlab.E1000PCI)
	res := vmlab.Run(t, vmlab.Machine{NIC: true, Script: script})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	rc := func(name string) string { return strings.TrimSpace(string(res.ReadOut(t, name))) }
	if got := rc("capture.rc"); got != "0" {
		t.Fatalf("capture exit %s: %s", got, res.ReadOut(t, "capture.err"))
	}
	data := res.ReadOut(t, "e1000.log")
	if os.Getenv("IOTAP_SAVE_LAB_LOG") != "" {
		os.WriteFile(os.Getenv("IOTAP_SAVE_LAB_LOG"), data, 0o600)
	}
	checkE1000Log(t, data)

	// Cleanup: tracer stopped, device bound again.
	if got := rc("tracer.after"); got != "nop" {
		t.Errorf("tracer after capture: %q", got)
	}
	if rc("bound.after") != "bound" {
		t.Error("e1000 not bound after capture")
	}

	t.Logf("capture stderr:\n%s", res.ReadOut(t, "capture.err"))
	t.Logf("tiny buffer capture stderr:\n%s", res.ReadOut(t, "tiny.err"))
	// A tiny buffer loses events: exit 3 with a buffer suggestion.
	if got := rc("tiny.rc"); got != "3" {
		t.Errorf("tiny buffer capture exit %s, want 3: %s", got, res.ReadOut(t, "tiny.err"))
	}
	if e := string(res.ReadOut(t, "tiny.err")); !strings.Contains(e, "lost") || !strings.Contains(e, "--buffer-kb") {
		t.Errorf("tiny buffer stderr lacks the loss report: %s", e)
	}
	// The report's exact words (pinned: the message is built in
	// CaptureResult.LossText and cmd/iotap): the lost count is the larger
	// of the two counts, the retry size larger than the buffer.
	lossRE := regexp.MustCompile(`(?m)^iotap: mmio capture: mmiotrace lost (\d+) events \((\d+) in "Lost N events\." marks, (\d+) ring-buffer overruns\) with 4 KiB per CPU: retry with --buffer-kb (\d+)$`)
	if m := lossRE.FindStringSubmatch(string(res.ReadOut(t, "tiny.err"))); m == nil {
		t.Errorf("tiny buffer stderr: no loss line matching %s", lossRE)
	} else {
		n := func(i int) uint64 { v, _ := strconv.ParseUint(m[i], 10, 64); return v }
		if n(1) != max(n(2), n(3)) || n(1) == 0 || n(4) <= 4 {
			t.Errorf("loss line %q: lost %d of marks %d and overruns %d, retry size %d", m[0], n(1), n(2), n(3), n(4))
		}
	}

	// The replay dry-run lists the writes in log order.
	if got := rc("replay.rc"); got != "0" {
		t.Fatalf("replay exit %s: %s", got, res.ReadOut(t, "replay.err"))
	}
	checkReplayDryRun(t, data, res.ReadOut(t, "replay.txt"))

	// Real replay: refused while e1000 is bound; once unbound the write
	// lands in RAL0 and reads back, the wrong expectation is reported.
	if !strings.Contains(string(data), "PCIDEV 0018 8086100e b febc0000 ") {
		t.Fatal("BAR0 of the e1000 moved: update the replay log of this test")
	}
	if got := rc("replay-bound.rc"); got != "1" || !strings.Contains(rc("replay-bound.err"), "is bound to e1000") {
		t.Errorf("replay onto a bound device: exit %s: %s", got, rc("replay-bound.err"))
	}
	if got, e := rc("replay-real.rc"), rc("replay-real.err"); got != "1" || !strings.Contains(e, "1 writes, 2 reads checked, 1 divergences") {
		t.Errorf("real replay: exit %s: %s", got, e)
	}
	if out := rc("replay-real.txt"); !strings.Contains(out, "0000:00:03.0/0+0x5400 read 0x12345678, recorded 0x87654321") || strings.Count(out, "divergence") != 1 {
		t.Errorf("real replay divergences:\n%s", out)
	}
}

func checkE1000Log(t *testing.T, data []byte) {
	t.Helper()
	rd := mmiotrace.NewReader(bytes.NewReader(data))
	var out bytes.Buffer
	w := mmiotrace.NewWriter(&out)
	bars := mmiotrace.NewBARMap()
	var rec mmiotrace.Record
	var (
		n                                    int
		sawPCIDev, sawMap, sawStatus, sawIMC bool
		sawMark                              bool
		bar0                                 uint64
	)
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 1 && (rec.Kind != mmiotrace.KindVersion || string(rec.Text) != "20070824") {
			t.Errorf("first record %q, want VERSION 20070824", rec.Line)
		}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
		bars.Observe(&rec)
		switch rec.Kind {
		case mmiotrace.KindPCIDev:
			if rec.PCI.Addr().String() == vmlab.E1000PCI && rec.PCI.Vendor == 0x8086 && rec.PCI.Device == 0x100e {
				sawPCIDev, bar0 = true, rec.PCI.BARStart(0)
			}
		case mmiotrace.KindMap:
			if bar0 != 0 && rec.Phys == bar0 {
				sawMap = true
			}
		case mmiotrace.KindRead:
			if loc, ok := bars.Lookup(rec.Phys); ok && loc.BAR.Addr.String() == vmlab.E1000PCI && loc.Offset == 0x8 && rec.Width == 4 {
				sawStatus = true
			}
		case mmiotrace.KindWrite:
			if loc, ok := bars.Lookup(rec.Phys); ok && loc.BAR.Addr.String() == vmlab.E1000PCI && loc.Offset == 0xd8 && rec.Value == 0xffffffff {
				sawIMC = true
			}
		case mmiotrace.KindMark:
			if string(rec.Text) == "iotap lab: before bind" {
				sawMark = true
			}
		case mmiotrace.KindOther:
			t.Errorf("unrecognised line %d: %q", rd.Line(), rec.Line)
		}
	}
	w.Flush()
	if !sawPCIDev || !sawMap || !sawStatus || !sawIMC || !sawMark {
		t.Errorf("log lacks: PCIDEV e1000 %v, MAP BAR0 %v, read STATUS %v, write IMC=0xffffffff %v, marker %v",
			sawPCIDev, sawMap, sawStatus, sawIMC, sawMark)
	}
	if rd.Lost() != 0 {
		t.Errorf("%d events lost", rd.Lost())
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Error("round trip of the kernel log is not byte-identical")
	}
}

func checkReplayDryRun(t *testing.T, data, listing []byte) {
	t.Helper()
	var want []string
	rd := mmiotrace.NewReader(bytes.NewReader(data))
	var rec mmiotrace.Record
	for rd.ReadInto(&rec) == nil {
		if rec.Kind == mmiotrace.KindWrite {
			want = append(want, fmt.Sprintf("0x%x 0x%x", rec.Phys, rec.Value))
		}
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(listing)), "\n") {
		// "W 4 0000:00:03.0/0+0xd8 0xfebc00d8 0xffffffff"
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "W" {
			got = append(got, f[3]+" "+f[4])
		}
	}
	if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dry run lists %d writes, log has %d (or order differs)\n%s", len(got), len(want), listing)
	}
}

// TestLabCaptureOptions checks CPU offlining (and that CPUs come back), the
// multi-CPU warning, markers from a named pipe, the bundle, and a capture
// stopped by SIGINT, on a two-CPU lab VM.
func TestLabCaptureOptions(t *testing.T) {
	script := `
cat /sys/devices/system/cpu/online > /out/online.before
rc=0; iotap mmio capture --offline-cpus --marker-fifo /tmp/marks --mark start --bundle /out/bundle.tar.gz -o /out/opts.log -- \
  sh -c 'cat /sys/devices/system/cpu/online > /out/online.during; echo "from fifo" > /tmp/marks; sleep 1' 2>/out/opts.err || rc=$?
echo $rc > /out/opts.rc
cat /sys/devices/system/cpu/online > /out/online.after
test -e /tmp/marks || echo removed > /out/fifo.after
rc=0; iotap mmio capture -o /out/warn.log -- true 2>/out/warn.err || rc=$?
echo $rc > /out/warn.rc
iotap mmio capture -o /out/int.log 2>/out/int.err &
pid=$!
sleep 3
kill -INT $pid
rc=0; wait $pid || rc=$?
echo $rc > /out/int.rc
cat /sys/kernel/tracing/current_tracer > /out/tracer.after
cat /sys/kernel/tracing/available_tracers > /out/tracers
cat /sys/kernel/tracing/buffer_size_kb > /out/bufkb.before
other=$(tr ' ' '\n' < /sys/kernel/tracing/available_tracers | grep -v -e '^mmiotrace$' -e '^nop$' -e '^$' | head -1)
echo "$other" > /out/other.tracer
echo "$other" > /sys/kernel/tracing/current_tracer
rc=0; iotap mmio capture -o /out/busy.log -- true 2>/out/busy.err || rc=$?
echo $rc > /out/busy.rc
rc=0; iotap mmio capture --force --buffer-kb 64 -o /out/force.log -- true 2>/out/force.err || rc=$?
echo $rc > /out/force.rc
cat /sys/kernel/tracing/current_tracer > /out/tracer.force
cat /sys/kernel/tracing/buffer_size_kb > /out/bufkb.after
rc=0; iotap mmio capture --bind 0000:00:03.0 -o /out/z.log.zst 2>/out/z.err || rc=$?
echo $rc > /out/z.rc
`
	res := vmlab.Run(t, vmlab.Machine{NIC: true, CPUs: 2, Script: script})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	out := func(name string) string { return strings.TrimSpace(string(res.ReadOut(t, name))) }
	if got := out("opts.rc"); got != "0" {
		t.Fatalf("capture exit %s: %s", got, out("opts.err"))
	}
	if out("online.before") != "0-1" || out("online.during") != "0" || out("online.after") != "0-1" {
		t.Errorf("CPUs online before/during/after: %q %q %q", out("online.before"), out("online.during"), out("online.after"))
	}
	if !strings.Contains(out("opts.err"), "took 1 CPUs offline") {
		t.Errorf("no offlining report: %s", out("opts.err"))
	}
	if out("fifo.after") != "removed" {
		t.Error("marker fifo left behind")
	}
	log := string(res.ReadOut(t, "opts.log"))
	if !strings.HasPrefix(log, "VERSION 20070824\n") || !strings.Contains(log, " start\n") || !strings.Contains(log, " from fifo\n") {
		t.Errorf("markers missing from the log:\n%s", log)
	}
	checkBundle(t, res.ReadOut(t, "bundle.tar.gz"), []byte(log))
	// The progress lines, pinned: the log's lines and bytes as counted
	// here, then the bundle, in that order.
	wantDone := fmt.Sprintf("iotap: mmio capture: %d lines (%d bytes) to /out/opts.log\niotap: mmio capture: bundle /out/bundle.tar.gz\n", strings.Count(log, "\n"), len(log))
	if e := string(res.ReadOut(t, "opts.err")); !strings.HasSuffix(e, wantDone) {
		t.Errorf("capture stderr does not end with\n%s\ngot:\n%s", wantDone, e)
	}

	if out("warn.rc") != "0" || !strings.Contains(out("warn.err"), "2 CPUs online") {
		t.Errorf("multi-CPU warning: exit %s: %s", out("warn.rc"), out("warn.err"))
	}
	if out("int.rc") != "0" || !strings.HasPrefix(string(res.ReadOut(t, "int.log")), "VERSION 20070824\n") {
		t.Errorf("SIGINT capture: exit %s: %s", out("int.rc"), out("int.err"))
	}
	if out("tracer.after") != "nop" {
		t.Errorf("tracer left %q", out("tracer.after"))
	}

	// Another tracer is active: refused, then replaced with --force; the
	// buffer size comes back.
	other := out("other.tracer")
	if other == "" {
		t.Fatalf("no tracer other than mmiotrace and nop: %s", out("tracers"))
	}
	if out("busy.rc") != "1" || !strings.Contains(out("busy.err"), fmt.Sprintf("tracer %q is active", other)) {
		t.Errorf("capture over %s: exit %s: %s", other, out("busy.rc"), out("busy.err"))
	}
	if out("force.rc") != "0" || !strings.Contains(out("force.err"), "replacing the active tracer") || out("tracer.force") != "nop" {
		t.Errorf("--force: exit %s, tracer after %q: %s", out("force.rc"), out("tracer.force"), out("force.err"))
	}
	if !strings.HasPrefix(string(res.ReadOut(t, "force.log")), "VERSION 20070824\n") {
		t.Error("--force capture has no log")
	}
	if out("bufkb.before") != out("bufkb.after") {
		t.Errorf("buffer_size_kb %q before, %q after", out("bufkb.before"), out("bufkb.after"))
	}

	// A compressed capture streams through zstd and reads back.
	if out("z.rc") != "0" {
		t.Fatalf("zstd capture: exit %s: %s", out("z.rc"), out("z.err"))
	}
	z := res.ReadOut(t, "z.log.zst")
	rd := mmiotrace.NewReader(bytes.NewReader(z))
	var rec mmiotrace.Record
	var writes int
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == mmiotrace.KindWrite {
			writes++
		}
	}
	if rd.Compression() != mmiotrace.Zstd || writes < 1000 {
		t.Errorf("zstd capture: compression %v, %d writes", rd.Compression(), writes)
	}
}

func checkBundle(t *testing.T, tgz, log []byte) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
	if !bytes.Equal(files["opts.log"], log) {
		t.Error("bundle log differs from the capture")
	}
	if !bytes.Contains(files["lspci.txt"], []byte("0000:00:03.0 vendor 0x8086 device 0x100e")) {
		t.Errorf("bundle lspci.txt:\n%s", files["lspci.txt"])
	}
	if !bytes.Contains(files["pci-devices.txt"], []byte("8086100e")) || len(files["dmesg.txt"]) == 0 {
		t.Errorf("bundle: pci-devices %q, dmesg %d bytes", files["pci-devices.txt"], len(files["dmesg.txt"]))
	}
}

// TestLabTraceFile reads what the tracefs "trace" file (not trace_pipe)
// shows for mmiotrace: its "# tracer: mmiotrace" header and the records.
func TestLabTraceFile(t *testing.T) {
	script := fmt.Sprintf(`
cd /sys/kernel/tracing
echo mmiotrace > current_tracer
echo %[1]s > /sys/bus/pci/drivers/e1000/unbind
echo %[1]s > /sys/bus/pci/drivers/e1000/bind
echo "trace file test" > trace_marker
cat trace > /out/trace.txt
echo nop > current_tracer
`, vmlab.E1000PCI)
	res := vmlab.Run(t, vmlab.Machine{NIC: true, Script: script})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	data := res.ReadOut(t, "trace.txt")
	if p := os.Getenv("IOTAP_SAVE_LAB_TRACE"); p != "" {
		os.WriteFile(p, data, 0o600)
	}
	if !bytes.HasPrefix(data, []byte("# tracer: mmiotrace\n")) {
		t.Fatalf("trace file starts with %q", data[:min(len(data), 80)])
	}
	rd := mmiotrace.NewReader(bytes.NewReader(data))
	var out bytes.Buffer
	w := mmiotrace.NewWriter(&out)
	kinds := map[mmiotrace.Kind]int{}
	var rec mmiotrace.Record
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds[rec.Kind]++
		w.Write(&rec)
	}
	w.Flush()
	if !bytes.Equal(out.Bytes(), data) {
		t.Error("trace file round trip is not byte-identical")
	}
	if kinds[mmiotrace.KindOther] != 0 || kinds[mmiotrace.KindComment] == 0 || kinds[mmiotrace.KindMap] == 0 || kinds[mmiotrace.KindRead] == 0 || kinds[mmiotrace.KindMark] == 0 {
		t.Errorf("kinds %v", kinds)
	}
}
