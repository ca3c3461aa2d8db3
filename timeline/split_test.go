package timeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"encoding/binary"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// parseNS reads "SEC.FRACTION" (up to 9 digits) as integer nanoseconds,
// without going through floating point.
func parseNS(t *testing.T, s string) int64 {
	t.Helper()
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	frac = (frac + "000000000")[:9]
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return n*1e9 + f
}

// bigMMIOLog writes the lab's e1000 probe log with its timed records
// repeated copies times, each copy shifted after the previous one, and a
// "Lost 7 events." mark in the middle of copy lostIn. It returns the
// timed records as (kind, ns) for the oracle.
func bigMMIOLog(t *testing.T, path string, copies, lostIn int) (kinds []string, times []int64) {
	t.Helper()
	in, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	var head []string
	var body [][]string
	for _, l := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		f := strings.Fields(l)
		switch f[0] {
		case "R", "W", "MAP", "UNMAP", "MARK", "UNKNOWN":
			body = append(body, f)
		default:
			head = append(head, l)
		}
	}
	tf := func(f []string) int {
		if f[0] == "R" || f[0] == "W" {
			return 2
		}
		return 1
	}
	first := parseNS(t, body[0][tf(body[0])])
	last := parseNS(t, body[len(body)-1][tf(body[len(body)-1])])
	span := last - first + 1e6
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l + "\n")
	}
	for c := 0; c < copies; c++ {
		for i, f := range body {
			ns := parseNS(t, f[tf(f)]) + int64(c)*span
			g := append([]string(nil), f...)
			g[tf(f)] = fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3)
			b.WriteString(strings.Join(g, " ") + "\n")
			kinds = append(kinds, f[0])
			times = append(times, ns/1e3*1e3)
			if c == lostIn && i == len(body)/2 {
				b.WriteString(fmt.Sprintf("MARK %d.%06d Lost 7 events.\n", ns/1e9, ns%1e9/1e3))
				kinds = append(kinds, "LOST")
				times = append(times, ns/1e3*1e3)
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return kinds, times
}

// bigPcapng writes copies of a real USB capture one after the other,
// each shifted 20 s after the previous (the pcapng timestamps and the
// usbmon headers' own, which are what usbmon readers use), and returns
// tshark's view of it: every frame's usbmon time and URB type.
func bigPcapng(t *testing.T, dir string, copies int) (path string, times []int64, types []string) {
	t.Helper()
	src := "../../shared/testdata/usb/km003c-adc-1000hz.pcapng"
	if _, err := os.Stat(src); err != nil {
		t.Skipf("%s absent (external test data): %v", src, err)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skipf("tshark not found (apt-get install tshark): %v", err)
	}
	in, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "usb.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcapgo.NewNgWriter(f, layers.LinkType(220))
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < copies; c++ {
		r, err := pcapgo.NewNgReader(bytes.NewReader(in), pcapgo.DefaultNgReaderOptions)
		if err != nil {
			t.Fatal(err)
		}
		for {
			data, ci, err := r.ReadPacketData()
			if err != nil {
				break
			}
			shift := int64(20 * c)
			pkt := append([]byte(nil), data...)
			if len(pkt) < 28 || r.LinkType() != 220 {
				t.Fatalf("not a usbmon mmapped packet (link type %d, %d bytes)", r.LinkType(), len(pkt))
			}
			sec := int64(binary.LittleEndian.Uint64(pkt[16:])) + shift
			binary.LittleEndian.PutUint64(pkt[16:], uint64(sec))
			ci.Timestamp = ci.Timestamp.Add(time.Duration(shift) * time.Second)
			ci.InterfaceIndex = 0
			if err := w.WritePacket(ci, pkt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "usb.urb_ts_sec", "-e", "usb.urb_ts_usec", "-e", "usb.urb_type").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "\t")
		sec, err1 := strconv.ParseInt(f[0], 10, 64)
		usec, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("tshark line %q", l)
		}
		times = append(times, sec*1e9+usec*1e3)
		types = append(types, strings.Trim(f[2], "'"))
	}
	return path, times, types
}

// integrate sums a counter track's step function: each value holds until
// the next; values are per second.
func integrate(evs []dEvent) float64 {
	var sum float64
	for i := 0; i+1 < len(evs); i++ {
		sum += evs[i].value * float64(evs[i+1].ts-evs[i].ts) / 1e9
	}
	return sum
}

// TestSplitLarge is the must-be-true test of the split timeline: a large
// capture (a real mmiotrace log repeated with shifted times and a loss
// mark, a real pcapng merged from shifted copies, user events with
// markers) exported with a small --max-size. Every file is under the
// bound; every window decodes (our decoder, which resolves each file's
// own interning and track declarations, and protoc with Perfetto's
// proto); the events of every input in each window are those of the input
// between the window's bounds (counted from the log text and by tshark);
// the overview's counters integrate to the totals of usb stats (usb.Stats),
// mmio stats (mmiotrace.Analyze) and the events file; the loss is in its
// window and in the overview.
func TestSplitLarge(t *testing.T) {
	mmioCopies, usbCopies, max := 12, 6, int64(2<<20)
	if testing.Short() {
		mmioCopies, usbCopies, max = 4, 2, 1<<20
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "mmio.log")
	kinds, mtimes := bigMMIOLog(t, logPath, mmioCopies, 1)
	usbPath, utimes, utypes := bigPcapng(t, dir, usbCopies)
	evPath := filepath.Join(dir, "events.ndjson")
	var eb strings.Builder
	nev, nmark := 0, 0
	for i := 0; i < 2000; i++ {
		if i%250 == 0 {
			fmt.Fprintf(&eb, `{"name":"iotap_marker","ts":%d,"cpu":0,"pid":1,"fields":{"text":"step %d"}}`+"\n", int64(i)*5e7, i)
			nmark++
		} else {
			fmt.Fprintf(&eb, `{"name":"app_req","ts":%d,"cpu":1,"pid":2,"fields":{"id":%d}}`+"\n", int64(i)*5e7, i)
		}
		nev++
	}
	os.WriteFile(evPath, []byte(eb.String()), 0o600)

	out := filepath.Join(dir, "out.pftrace")
	st, err := ExportSplit(context.Background(), out, []string{logPath, usbPath, evPath}, Options{}, SplitOptions{MaxSize: max})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Split || len(st.Index.Windows) < 3 {
		t.Fatalf("split %v, %d windows: want several", st.Split, len(st.Index.Windows))
	}
	var idx Index
	b, err := os.ReadFile(filepath.Join(dir, "out.d", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Inputs) != 3 || idx.Inputs[0].Kind != KindMMIO || idx.Inputs[1].Kind != KindUSB || idx.Inputs[2].Kind != KindEvents {
		t.Fatalf("index inputs %+v", idx.Inputs)
	}

	// Every file under the bound.
	ents, _ := os.ReadDir(filepath.Join(dir, "out.d"))
	if len(ents) != len(idx.Windows)+1 {
		t.Errorf("%d files in out.d, want %d windows + index.json", len(ents), len(idx.Windows))
	}
	for _, p := range append([]string{out}, func() (ps []string) {
		for _, w := range idx.Windows {
			ps = append(ps, filepath.Join(dir, "out.d", w.File))
		}
		return
	}()...) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > max {
			t.Errorf("%s: %d bytes, over the bound %d", p, fi.Size(), max)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", p, fi.Mode().Perm())
		}
	}

	// The oracle's timeline times: each input's first event at 0 (no
	// clocks file).
	mfirst, ufirst := mtimes[0], utimes[0]
	inWin := func(ts int64, w Window) bool { return uint64(ts) >= w.StartNS && uint64(ts) < w.EndNS }
	var sumEvents int64
	var lostWins []int
	continued := 0 // USB transfers in flight at a boundary, begun again in the next window
	for i, w := range idx.Windows {
		if i > 0 && w.StartNS != idx.Windows[i-1].EndNS {
			t.Errorf("window %d starts at %d, the previous ends at %d", i+1, w.StartNS, idx.Windows[i-1].EndNS)
		}
		sumEvents += w.Events
		var wantM, wantMInst, wantLost, wantU, wantS int64
		for j, k := range kinds {
			if !inWin(mtimes[j]-mfirst, w) {
				continue
			}
			wantM++
			switch k {
			case "R", "W", "MAP", "UNMAP", "UNKNOWN":
				wantMInst++
			case "LOST":
				wantMInst++
				wantLost += 7
			}
		}
		for j, ty := range utypes {
			if inWin(utimes[j]-ufirst, w) {
				wantU++
				if ty == "S" {
					wantS++
				}
			}
		}
		if w.PerInput[0] != wantM || w.PerInput[1] != wantU {
			t.Errorf("%s: %d MMIO and %d USB events, the inputs have %d and %d between its bounds", w.File, w.PerInput[0], w.PerInput[1], wantM, wantU)
		}
		if int64(w.Lost) != wantLost {
			t.Errorf("%s: lost %d, want %d", w.File, w.Lost, wantLost)
		}
		if wantLost > 0 {
			lostWins = append(lostWins, i)
		}
		data, err := os.ReadFile(filepath.Join(dir, "out.d", w.File))
		if err != nil {
			t.Fatal(err)
		}
		tr := decodeTrace(t, data) // fails on an undeclared track or name
		if !tr.cleared {
			t.Errorf("%s: does not start by clearing the incremental state", w.File)
		}
		checkSlicesNest(t, tr)
		var gotMInst, gotS, gotLostMarks int64
		for _, e := range tr.events {
			if _, cont := e.args["window"]; !cont && e.typ != typeCounter && e.typ != typeSliceEnd && (e.ts < w.StartNS || e.ts >= w.EndNS) {
				t.Errorf("%s: %s %q at %d outside [%d, %d)", w.File, tr.path(e.track), e.name, e.ts, w.StartNS, w.EndNS)
				break
			}
			if e.cat == "mmio" && e.typ == typeInstant {
				gotMInst++
			}
			if e.cat == "mmio" && e.name == "events lost" {
				gotLostMarks++
			}
			if e.cat == "usb" && e.typ == typeSliceBegin && e.args["window"] == nil {
				gotS++
			}
			if e.typ == typeSliceBegin && e.args["window"] != nil {
				continued++
				if e.ts != w.StartNS {
					t.Errorf("%s: a continued slice begins at %d, not at the window's start %d", w.File, e.ts, w.StartNS)
				}
			}
		}
		if gotMInst != wantMInst || gotS != wantS {
			t.Errorf("%s: %d MMIO instants and %d USB transfers begun, the inputs have %d and %d", w.File, gotMInst, gotS, wantMInst, wantS)
		}
		if (wantLost > 0) != (gotLostMarks > 0 && tr.lostMark > 0) {
			t.Errorf("%s: loss of %d events drawn %d times, %d previous_packet_dropped", w.File, wantLost, gotLostMarks, tr.lostMark)
		}
		text := protocDecode(t, data)
		if got := strings.Count(text, "track_event {"); got != len(tr.events) {
			t.Errorf("%s: protoc sees %d track events, our decoder %d", w.File, got, len(tr.events))
		}
	}
	if want := int64(len(kinds) + len(utimes) + nev); sumEvents != want {
		t.Errorf("windows hold %d events, the inputs %d", sumEvents, want)
	}
	if continued == 0 {
		t.Error("no transfer in flight at any boundary: the continuation of slices is not tested")
	}
	if len(lostWins) != 1 {
		t.Errorf("the loss is in %d windows, want 1", len(lostWins))
	}

	// The overview: counters against the stats of the inputs.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ov := decodeTrace(t, data)
	protocDecode(t, data)
	series := map[string][]dEvent{}
	for _, e := range ov.events {
		if e.typ == typeCounter {
			series[ov.path(e.track)] = append(series[ov.path(e.track)], e)
		}
	}
	total := func(match func(string) bool) int64 {
		var sum float64
		for p, evs := range series {
			if match(p) {
				sum += integrate(evs)
			}
		}
		return int64(math.Round(sum))
	}
	is := func(sub string) func(string) bool { return func(p string) bool { return strings.HasSuffix(p, sub) } }

	// mmio stats
	f, _ := os.Open(logPath)
	ms, err := mmiotrace.Analyze(f, mmiotrace.StatsOptions{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	reads, writes := ms.Kinds[mmiotrace.KindRead], ms.Kinds[mmiotrace.KindWrite]
	if got := total(is("BAR0 (e1000) accesses/s")); got != reads+writes {
		t.Errorf("overview: %d MMIO accesses, mmio stats %d reads + %d writes", got, reads, writes)
	}
	checked := 0
	for _, r := range ms.Regs {
		name := map[uint64]string{0x8: "STATUS", 0x10: "EECD"}[r.Key.Offset]
		if name == "" || !r.Key.HasBAR || r.Key.Width != 4 {
			continue
		}
		checked++
		if got := total(is(fmt.Sprintf(" %s +%#x accesses/s", name, r.Key.Offset))); got != r.Reads+r.Writes {
			t.Errorf("overview: %d accesses of %s, mmio stats %d", got, name, r.Reads+r.Writes)
		}
	}
	if checked != 2 {
		t.Errorf("%d of STATUS and EECD found in mmio stats", checked)
	}
	if got := total(is("MMIO mmio.log/lost events/s")); got != 7 {
		t.Errorf("overview: %d lost events, want 7", got)
	}
	var lostInst int
	for _, e := range ov.events {
		if e.name == "events lost" && e.args["lost"] == uint64(7) {
			lostInst++
		}
	}
	if lostInst != 1 {
		t.Errorf("overview: %d loss instants, want 1", lostInst)
	}

	// usb stats
	uf, _ := os.Open(usbPath)
	rd, _, err := usbmon.NewReader(uf)
	if err != nil {
		t.Fatal(err)
	}
	us := usb.NewStats()
	var ev usbmon.Event
	for rd.ReadInto(&ev) == nil {
		us.Add(&ev)
	}
	uf.Close()
	var compl, bytesIn, errs uint64
	for _, e := range us.Endpoints() {
		compl += e.Completions
		bytesIn += e.Bytes
		errs += e.Errors + e.Stalls + e.SubmitErrors
	}
	if got := total(is("transfers/s")); got != int64(compl) {
		t.Errorf("overview: %d transfers, usb stats %d completions", got, compl)
	}
	if got := total(is("bytes/s")); got != int64(bytesIn) {
		t.Errorf("overview: %d bytes, usb stats %d", got, bytesIn)
	}
	if got := total(is("errors/s")); got != int64(errs) {
		t.Errorf("overview: %d errors, usb stats %d", got, errs)
	}
	// events, per input
	for i, name := range []string{"MMIO mmio.log/events/s", "USB usb.pcapng/events/s", "user_events events.ndjson/events/s"} {
		if got, want := total(func(p string) bool { return p == name }), idx.Inputs[i].Events; got != want {
			t.Errorf("overview %s: %d, the input has %d", name, got, want)
		}
	}
	if got := total(is("app_req events/s")); got != int64(nev-nmark) {
		t.Errorf("overview: %d app_req, the file has %d", got, nev-nmark)
	}
	// markers: the events' and the log's (MARK lines that are not losses)
	var markers int
	for _, e := range ov.events {
		if e.cat == "marker" {
			markers++
		}
	}
	logMarks := 0
	for _, k := range kinds {
		if k == "MARK" {
			logMarks++
		}
	}
	if markers != nmark+logMarks {
		t.Errorf("overview: %d markers, the inputs have %d", markers, nmark+logMarks)
	}
	// one slice per window, naming its file
	var named int
	for _, e := range ov.events {
		if e.typ == typeSliceBegin && strings.HasPrefix(fmt.Sprint(e.args["file"]), "out.d/") {
			named++
		}
	}
	if named != len(idx.Windows) {
		t.Errorf("overview: %d window slices, want %d", named, len(idx.Windows))
	}
}

// TestSplitFits: a timeline under the bound is one file, byte for byte
// what Export writes, and no detail directory is left.
func TestSplitFits(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.pftrace")
	in := "../testdata/mmiotrace/e1000-probe.log"
	st, err := ExportSplit(context.Background(), out, []string{in}, Options{}, SplitOptions{MaxSize: 64 << 20})
	if err != nil || st.Split {
		t.Fatalf("split %v, err %v", st != nil && st.Split, err)
	}
	var buf bytes.Buffer
	if _, err := Export(context.Background(), &buf, []string{in}, Options{}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("one-file output differs from Export's (%d vs %d bytes)", len(got), buf.Len())
	}
	if _, err := os.Stat(filepath.Join(dir, "t.d")); !os.IsNotExist(err) {
		t.Errorf("t.d: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d entries in the directory, want only t.pftrace", len(ents))
	}
	// A directory of other files in the way is refused, not replaced.
	os.Mkdir(filepath.Join(dir, "t.d"), 0o700)
	os.WriteFile(filepath.Join(dir, "t.d", "notes.txt"), []byte("mine"), 0o600)
	if _, err := ExportSplit(context.Background(), out, []string{in}, Options{}, SplitOptions{MaxSize: MinMaxSize}); err == nil {
		t.Error("a t.d with other files was accepted")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "t.d", "notes.txt")); string(b) != "mine" {
		t.Error("t.d/notes.txt changed")
	}
}

// A symbolic link named as the output is refused as every iotap output
// refuses it (internal/outfile), whether the trace fits one file or not:
// the link and its target stay as they were and nothing is left.
func TestSplitRefusesLink(t *testing.T) {
	in := "../testdata/mmiotrace/e1000-probe.log"
	for _, max := range []int64{64 << 20, MinMaxSize, 0} {
		dir := t.TempDir()
		out := filepath.Join(dir, "t.pftrace")
		target := filepath.Join(dir, "target")
		if err := os.Symlink(target, out); err != nil {
			t.Fatal(err)
		}
		_, err := ExportSplit(context.Background(), out, []string{in}, Options{}, SplitOptions{MaxSize: max})
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("max %d: %v", max, err)
		}
		if fi, err := os.Lstat(out); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("max %d: the link was replaced", max)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("max %d: left %v", max, ents)
		}
	}
}
