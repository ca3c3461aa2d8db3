package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tsharkEpochs is the oracle of a pcapng window: the frame.time_epoch of
// the frames tshark selects with filter ("" for all).
func tsharkEpochs(t *testing.T, file, filter string) []string {
	t.Helper()
	args := []string{"-r", file, "-T", "fields", "-e", "frame.time_epoch"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	return nonEmpty(strings.Split(string(out), "\n"))
}

// TestWindowUSBConvert: usb convert --from/--to (and --time LO..HI)
// writes the frames tshark selects by frame.time_relative (and, for a
// wall-clock window, by frame.time_epoch), with and without the index;
// --to FORMAT is still the deprecated --format; a window of no frames is a
// valid empty pcapng; mark: is a usage error that names the command.
func TestWindowUSBConvert(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "lab.pcapng")
	if err := os.WriteFile(in, src, 0o600); err != nil {
		t.Fatal(err)
	}
	// the oracle: tshark's frame.time_relative and frame.time_epoch of every frame
	fields, err := exec.Command("tshark", "-r", in, "-T", "fields", "-e", "frame.time_relative", "-e", "frame.time_epoch").Output()
	if err != nil {
		t.Fatal(err)
	}
	var rel []float64
	var epoch []string
	for _, l := range nonEmpty(strings.Split(string(fields), "\n")) {
		f := strings.Fields(l)
		r, _ := strconv.ParseFloat(f[0], 64)
		rel, epoch = append(rel, r), append(epoch, f[1])
	}
	first, _ := strconv.ParseFloat(epoch[0], 64)
	wall := time.Unix(int64(first)+7, 0).UTC()
	wallRel := float64(wall.Unix()) - first
	cases := []struct {
		args   []string
		lo, hi float64 // frame.time_relative
	}{
		{[]string{"--from", "1.4", "--to", "+4.3"}, 1.4, 5.7},
		{[]string{"--time", "7.8..8.5"}, 7.8, 8.5},
		{[]string{"--from", "9.1"}, 9.1, 1e9},
		{[]string{"--from", wall.Format(time.RFC3339), "--to", "+1.5"}, wallRel, wallRel + 1.5},
		{[]string{"--from", "100", "--to", "200"}, 100, 200},
	}
	out := filepath.Join(dir, "w.pcapng")
	plain := map[int][]byte{}
	for _, indexed := range []bool{false, true} {
		if indexed {
			if _, errs, code := runUSB(t, "index", in); code != 0 {
				t.Fatalf("index: %s", errs)
			}
		}
		for i, c := range cases {
			var want []string
			for j, r := range rel {
				if r >= c.lo-1e-9 && r < c.hi-1e-9 {
					want = append(want, epoch[j])
				}
			}
			if (len(want) == 0) != (c.lo == 100) {
				t.Errorf("%v: tshark's times select %d frames", c.args, len(want))
			}
			args := append(append([]string{"usb", "convert", "--format", "pcapng"}, c.args...), in, "-o", out)
			_, errs, code := runUSB(t, args...)
			if code != 0 || strings.Contains(errs, "index ignored") {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			b, _ := os.ReadFile(out)
			if indexed {
				// seeking with the index writes the same file
				if string(b) != string(plain[i]) {
					t.Errorf("%v: with the index, %d bytes; without, %d", c.args, len(b), len(plain[i]))
				}
				continue
			}
			plain[i] = b
			if i == 1 || i == 2 {
				continue // tshark is slow to start: the text below checks these
			}
			if got := tsharkEpochs(t, out, ""); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%v: %d frames, tshark's times select %d", c.args, len(got), len(want))
			}
			// the same window in text: one line per frame
			args = append(append([]string{"usb", "convert", "-f", "1u"}, c.args...), in, "-o", "-")
			if txt, errs, code := runUSB(t, args...); code != 0 || strings.Count(txt, "\n") != len(want) {
				t.Errorf("%v: exit %d, %d lines, tshark %d frames: %s", args, code, strings.Count(txt, "\n"), len(want), errs)
			}
		}
	}
	// --to FORMAT is the old --format: it still works, with a note
	if txt, errs, code := runUSB(t, "usb", "convert", "--to", "1u", "--time", "7.8..8.5", in, "-o", "-"); code != 0 || txt == "" || !strings.Contains(errs, "--to 1u is deprecated") {
		t.Errorf("--to 1u: exit %d: %s", code, errs)
	}
	if _, errs, code := runUSB(t, "usb", "convert", "-f", "1u", "--from", "mark:probe", in, "-o", "-"); code != 2 || !strings.HasPrefix(errs, "iotap: usb convert: "+in) {
		t.Errorf("mark: on a pcapng: exit %d: %s", code, errs)
	}
	if _, errs, code := runUSB(t, "usb", "convert", "-f", "1u", "--from", "1", "--time", "1..2", in, "-o", "-"); code != 2 || !strings.Contains(errs, "one or the other") {
		t.Errorf("--from and --time: exit %d: %s", code, errs)
	}
}

// TestWindowMMIOFilterReplay: mmio filter and mmio replay --dry-run with
// --from/--to keep the accesses (filter) and the writes (replay) gawk
// selects by the log's timestamps, for a relative, a marker and an empty
// window, with and without the index; the filtered log starts with the
// log's header.
func TestWindowMMIOFilterReplay(t *testing.T) {
	if _, err := exec.LookPath("gawk"); err != nil {
		t.Skip("gawk not installed")
	}
	src, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "e1000.log")
	if err := os.WriteFile(log, src, 0o600); err != nil {
		t.Fatal(err)
	}
	const mark = "vmlab: unbind and bind e1000 0000:00:03.0"
	cases := []struct {
		from, to, mark string
		fromUS, toUS   int64
	}{
		{"0.45", "+0.3", "", 450000, 750000},
		{"mark:" + mark, "+0.4", mark, 0, 400000},
		{"50", "60", "", 50e6, 60e6},
	}
	accessRE := regexp.MustCompile(`(?m)^[RW] .*$`)
	replayRE := regexp.MustCompile(`"kind":"mmio_replay_access"`)
	for _, indexed := range []bool{false, true} {
		if indexed {
			if _, errs, code := runMMIO(t, "index", log); code != 0 {
				t.Fatalf("index: %s", errs)
			}
		}
		for _, c := range cases {
			want := gawkMMIOWindow(t, log, c.mark, c.fromUS, c.toUS)
			writes := 0
			for _, l := range want {
				if l[0] == 'W' {
					writes++
				}
			}
			out, errs, code := runMMIO(t, "mmio", "filter", "--from", c.from, "--to", c.to, log)
			if code != 0 || strings.Contains(errs, "index ignored") {
				t.Fatalf("mmio filter %s: exit %d: %s", c.from, code, errs)
			}
			if got := accessRE.FindAllString(out, -1); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("mmio filter %s (indexed %v): %d accesses, gawk %d", c.from, indexed, len(got), len(want))
			}
			if !strings.HasPrefix(out, "VERSION ") {
				t.Errorf("mmio filter %s: the window does not start with the log's header: %.40q", c.from, out)
			}
			out, errs, code = runMMIO(t, "mmio", "replay", "--dry-run", "--json", "--from", c.from, "--to", c.to, log)
			if code != 0 {
				t.Fatalf("mmio replay %s: exit %d: %s", c.from, code, errs)
			}
			if got := len(replayRE.FindAllString(out, -1)); got != writes {
				t.Errorf("mmio replay %s (indexed %v): %d writes, gawk %d", c.from, indexed, got, writes)
			}
			if !strings.Contains(out, `"file":"`+log+`"`) {
				t.Errorf("mmio replay %s: the input record does not name %s: %.200s", c.from, log, out)
			}
		}
	}
	for _, cmd := range [][]string{{"mmio", "filter"}, {"mmio", "replay", "--dry-run"}} {
		if _, errs, code := runMMIO(t, append(cmd, "--from", "mark:nowhere", log)...); code != 2 || !strings.HasPrefix(errs, "iotap: "+strings.Join(cmd[:2], " ")+": ") || !strings.Contains(errs, "nowhere") {
			t.Errorf("%v mark:nowhere: exit %d: %s", cmd, code, errs)
		}
	}
}

// TestWindowNamesInput: with --from/--to a reader's "file" fields and
// messages name the user's input, not the temporary cut, and an input
// that is no trace is refused in the command's name (usb convert: as
// without a window), not cut's.
func TestWindowNamesInput(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "e1000.log")
	if err := os.WriteFile(log, src, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"mmio", "stats", "--json"}, {"mmio", "read", "--json"}} {
		out, errs, code := runMMIO(t, append(cmd, "--from", "0.45", "--to", "+0.3", log)...)
		if code != 0 || strings.Contains(out+errs, "iotap-window-") || !strings.Contains(out, `"file":"`+log+`"`) {
			t.Errorf("%v: exit %d, the input record names %q: %s", cmd, code, regexp.MustCompile(`"file":"[^"]*"`).FindString(out), errs)
		}
	}
	junk := filepath.Join(dir, "junk.log")
	if err := os.WriteFile(junk, []byte(strings.Repeat("\x00\xff binary \x01", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"mmio", "read"}, {"pt", "dump", "--json"}, {"mmio", "filter"}} {
		name := strings.Join(cmd[:2], " ")
		_, errs, code := runMMIO(t, append(cmd, "--from", "1", junk)...)
		if code != 1 || !strings.HasPrefix(errs, "iotap: "+name+": ") || !strings.Contains(errs, junk) || strings.Contains(errs, "cut:") || strings.Contains(errs, "iotap-window-") {
			t.Errorf("%v of no trace: exit %d: %s", cmd, code, errs)
		}
	}
	// usb convert says it as without a window (and as usb read does).
	want := "iotap: " + junk + ": not a usbmon capture: binary data (no trace format recognised)\n"
	if _, errs, code := runMMIO(t, "usb", "convert", "-f", "1u", "-o", "-", "--from", "1", junk); code != 1 || errs != want {
		t.Errorf("usb convert of no trace: exit %d: %q, want %q", code, errs, want)
	}
}

// TestWindowSIGPIPE: a reader of a window killed by SIGPIPE ('iotap mmio
// read --from 0 big.log | head -1') leaves nothing in TMPDIR.
func TestWindowSIGPIPE(t *testing.T) {
	if testing.Short() {
		t.Skip("runs this binary as iotap")
	}
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "e1000.log")
	if err := os.WriteFile(log, src, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mmio", "read", "--from", "0", log}, {"mmio", "names", "--from", "0", log}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "IOTAP_TEST_AS_MAIN=1", "TMPDIR="+tmp)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line == "" {
			t.Fatalf("%v: first line %q: %v", args, line, err)
		}
		stdout.Close() // head -1 exits
		err = cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 141 {
			t.Errorf("%v: %v, want exit 141 (SIGPIPE)", args, err)
		}
		left, _ := os.ReadDir(tmp)
		for _, e := range left {
			t.Errorf("%v left %s in TMPDIR", args, e.Name())
		}
	}
}

// TestWindowExport: export --from/--to writes the Parquet rows of the
// records in the window, read back by DuckDB: the mmio_accesses gawk
// selects by the log's stamps (relative and marker windows, with the
// log's index), the usb_events whose frame.time_relative tshark puts in
// the window; the captures row names the input; a missing marker is a
// usage error.
func TestWindowExport(t *testing.T) {
	needDuckDB(t)
	if _, err := exec.LookPath("gawk"); err != nil {
		t.Skip("gawk not installed")
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "e1000.log")
	if err := os.WriteFile(log, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runIotap(t, "index", log); code != 0 {
		t.Fatalf("index: %s", errs)
	}
	const mark = "vmlab: unbind and bind e1000 0000:00:03.0"
	for i, c := range []struct {
		from, to, mark string
		fromUS, toUS   int64
	}{
		{"0.45", "+0.3", "", 450000, 750000},
		{"mark:" + mark, "+0.4", mark, 0, 400000},
	} {
		var want []string
		for _, l := range gawkMMIOWindow(t, log, c.mark, c.fromUS, c.toUS) {
			us := strings.Replace(strings.Fields(l)[2], ".", "", 1)
			want = append(want, strings.TrimLeft(us, "0")+"000")
		}
		out := filepath.Join(dir, "pq"+strconv.Itoa(i))
		exportTo(t, out, "--from", c.from, "--to", c.to, log)
		r := duck(t, `SELECT string_agg(ts_ns::VARCHAR, ' ' ORDER BY ts_ns) AS ts, count(*) AS n,
  (SELECT string_agg(source_file, ' ') FROM '`+out+`/captures/*.parquet') AS src
FROM '`+out+`/mmio_accesses/*.parquet' WHERE access IN ('R', 'W')`)
		if got, _ := r.Rows[0]["ts"].(string); got != strings.Join(want, " ") || len(want) == 0 {
			t.Errorf("%s..%s: DuckDB reads %v accesses, gawk selects %d", c.from, c.to, r.Rows[0]["n"], len(want))
		}
		if r.Rows[0]["src"] != log {
			t.Errorf("captures: source_file %v, want the input %s", r.Rows[0]["src"], log)
		}
	}
	// usb: frame.time_relative in [7.8, 8.5)
	const pcap = "../../testdata/usbmon/lab-capture.pcapng"
	fields, err := exec.Command("tshark", "-r", pcap, "-T", "fields", "-e", "frame.time_relative", "-e", "frame.time_epoch").Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range nonEmpty(strings.Split(string(fields), "\n")) {
		f := strings.Fields(l)
		if r, _ := strconv.ParseFloat(f[0], 64); r >= 7.8 && r < 8.5 {
			want = append(want, strings.Replace(f[1], ".", "", 1))
		}
	}
	out := filepath.Join(dir, "usb")
	exportTo(t, out, "--from", "7.8", "--to", "8.5", pcap)
	r := duck(t, `SELECT string_agg(ts_ns::VARCHAR, ' ' ORDER BY seq) AS ts, count(*) AS n FROM '`+out+`/usb_events/*.parquet' WHERE NOT synthesized`)
	if got, _ := r.Rows[0]["ts"].(string); got != strings.Join(want, " ") || len(want) == 0 {
		t.Errorf("usb 7.8..8.5: DuckDB reads %v events, tshark selects %d", r.Rows[0]["n"], len(want))
	}
	// a capture directory: the mmiotrace marker placed on the common
	// clock (clocks.json) cuts the USB capture too
	const capDir = "../../testdata/capture"
	fields, err = exec.Command("tshark", "-r", capDir+"/usb.pcapng", "-T", "fields", "-e", "frame.time_epoch").Output()
	if err != nil {
		t.Fatal(err)
	}
	const between = 7015921000 - 20485622 // MARK 7.015921 lab: between + the mmio offset
	nUSB := 0
	for _, l := range nonEmpty(strings.Split(string(fields), "\n")) {
		ns, _ := strconv.ParseInt(strings.Replace(l, ".", "", 1), 10, 64)
		if c := ns - 1795291775000000050; c >= between && c < between+5e8 {
			nUSB++
		}
	}
	out = filepath.Join(dir, "cap")
	_, errs, code := runIotap(t, "export", "--parquet", out, "--from", "mark:lab: between", "--to", "+0.5s", capDir)
	r = duck(t, `SELECT count(*) AS n FROM '`+out+`/usb_events/*.parquet' WHERE NOT synthesized`)
	if code != 0 || num(t, r.Rows[0]["n"]) != int64(nUSB) || nUSB == 0 {
		t.Errorf("export of the capture from its marker: exit %d, %v usb events, tshark's times put %d in the window: %s", code, r.Rows[0]["n"], nUSB, errs)
	}
	if _, errs, code := runIotap(t, "export", "--parquet", filepath.Join(dir, "x"), "--from", "mark:nowhere", log); code != 2 || !strings.Contains(errs, "nowhere") {
		t.Errorf("mark:nowhere: exit %d: %s", code, errs)
	}
}

// TestWindowCompressed: a window of a zstd-compressed log reads the same
// accesses as the window of the plain log (the readers, report and the
// stream readers), and report names the log with its .zst, alone and in
// a directory; a window that does not resolve makes report exit 2.
func TestWindowCompressed(t *testing.T) {
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("zstd not installed")
	}
	dir := t.TempDir()
	const src = "../../testdata/mmiotrace/e1000-probe.log"
	capDir := filepath.Join(dir, "cap")
	os.Mkdir(capDir, 0o700)
	zst := filepath.Join(capDir, "e1000.log.zst")
	if out, err := exec.Command("zstd", "-q", "-o", zst, src).CombinedOutput(); err != nil {
		t.Fatalf("zstd: %v %s", err, out)
	}
	win := []string{"--from", "0.45", "--to", "+0.3"}
	for _, cmd := range [][]string{{"mmio", "stats"}, {"mmio", "filter"}, {"mmio", "read"}} {
		want, _, wcode := runMMIO(t, append(append(cmd, win...), src)...)
		got, errs, code := runMMIO(t, append(append(cmd, win...), zst)...)
		if code != 0 || wcode != 0 || got != want || len(got) < 200 {
			t.Errorf("%v of the .zst: exit %d, %d bytes; of the log: exit %d, %d bytes: %s", cmd, code, len(got), wcode, len(want), errs)
		}
	}
	for _, in := range []string{zst, capDir} {
		out, errs, code := runMMIO(t, append(append([]string{"report"}, win...), in)...)
		if code != 0 || !strings.Contains(out, "== "+zst+": mmio") || strings.Contains(out, "iotap-window-") {
			t.Errorf("report %s: exit %d, names %q: %s", in, code, regexp.MustCompile(`(?m)^== .*$`).FindString(out), errs)
		}
	}
	if _, errs, code := runMMIO(t, "report", "--from", "mark:nowhere", src); code != 2 || !strings.Contains(errs, "nowhere") {
		t.Errorf("report mark:nowhere: exit %d: %s", code, errs)
	}
}
