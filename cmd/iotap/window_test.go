package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gawkWindow is the oracle of an mmiotrace window: gawk reads the log's
// timestamps (integer microseconds, so no float rounding), takes the first
// timed line as the start and prints the R and W lines whose stamp is in
// [start+from, start+to) µs, or, with mark, in [the first MARK named mark,
// + to).
const gawkWindow = `
function us(s,   p) { p = index(s, "."); return (substr(s, 1, p - 1) * 1000000) + substr(s, p + 1) }
{
	t = -1
	if ($1 == "R" || $1 == "W") t = us($3)
	else if ($1 == "MAP" || $1 == "UNMAP" || $1 == "MARK") t = us($2)
	if (t < 0) next
	if (start == "") start = t
	if (mark != "" && lo == "" && $1 == "MARK") {
		m = $0; sub(/^MARK [0-9.]+ /, "", m)
		if (m == mark) { lo = t; hi = t + to }
	}
	if (mark == "" && lo == "") { lo = start + from; hi = start + to }
	if (($1 == "R" || $1 == "W") && lo != "" && t >= lo && t < hi) print
}`

func gawkMMIOWindow(t *testing.T, log, mark string, fromUS, toUS int64) []string {
	t.Helper()
	out, err := exec.Command("gawk", "-v", "mark="+mark, "-v", "from="+strconv.FormatInt(fromUS, 10),
		"-v", "to="+strconv.FormatInt(toUS, 10), gawkWindow, log).Output()
	if err != nil {
		t.Fatalf("gawk: %v", err)
	}
	return nonEmpty(strings.Split(string(out), "\n"))
}

func nonEmpty(ls []string) []string {
	var o []string
	for _, l := range ls {
		if l != "" {
			o = append(o, l)
		}
	}
	return o
}

// TestReaderWindowMMIO: --from/--to on mmio read, stats, names and diff,
// against gawk's selection of the log's lines by their timestamps, for a
// relative window, a marker window and an empty one, without and with the
// log's index.
func TestReaderWindowMMIO(t *testing.T) {
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
	cases := []struct {
		name, from, to string
		mark           string
		fromUS, toUS   int64 // for gawk
	}{
		{"relative", "0.45", "+0.3", "", 450000, 750000},
		// both ends on an access's stamp: the first is in, the last out
		{"boundary", "0.587538", "0.615537", "", 587538, 615537},
		{"marker", "mark:vmlab: unbind and bind e1000 0000:00:03.0", "+0.4", "vmlab: unbind and bind e1000 0000:00:03.0", 0, 400000},
		{"empty", "50", "60", "", 50e6, 60e6},
	}
	accessRE := regexp.MustCompile(`(?m)^[RW] .*$`)
	tsRE := regexp.MustCompile(`"ts_ns":(\d+)`)
	for _, indexed := range []bool{false, true} {
		if indexed {
			if _, errs, code := runMMIO(t, "index", log); code != 0 {
				t.Fatalf("index: %s", errs)
			}
		}
		for _, c := range cases {
			t.Run(c.name+map[bool]string{false: "", true: "/indexed"}[indexed], func(t *testing.T) {
				want := gawkMMIOWindow(t, log, c.mark, c.fromUS, c.toUS)
				t.Logf("gawk: %d accesses in the window", len(want))
				if (len(want) == 0) != (c.name == "empty") {
					t.Fatalf("gawk selects %d accesses", len(want))
				}
				out, errs, code := runMMIO(t, "mmio", "read", "--from", c.from, "--to", c.to, log)
				if code != 0 {
					t.Fatalf("mmio read: exit %d: %s", code, errs)
				}
				if strings.Contains(errs, "index ignored") {
					t.Errorf("mmio read: %s", errs)
				}
				got := accessRE.FindAllString(out, -1)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("mmio read: %d accesses, gawk %d", len(got), len(want))
				}
				if !strings.HasPrefix(out, "VERSION ") {
					t.Errorf("mmio read of the window does not start with the log's header: %.40q", out)
				}
				// stats: reads and writes
				out, errs, code = runMMIO(t, "mmio", "stats", "--json", "--from", c.from, "--to", c.to, log)
				if code != 0 {
					t.Fatalf("mmio stats: exit %d: %s", code, errs)
				}
				var r, w int
				for _, l := range want {
					if l[0] == 'R' {
						r++
					} else {
						w++
					}
				}
				counts := regexp.MustCompile(`"records":\{[^}]*\}`).FindString(out)
				for k, n := range map[string]int{"R": r, "W": w} {
					m := regexp.MustCompile(`"` + k + `":(\d+)`).FindStringSubmatch(counts)
					got := 0
					if m != nil {
						got, _ = strconv.Atoi(m[1])
					}
					if got != n {
						t.Errorf("mmio stats: %s %d, gawk %d (%s)", k, got, n, counts)
					}
				}
				// names: one record per access, stamped as the log
				out, errs, code = runMMIO(t, "mmio", "names", "--json", "--from", c.from, "--to", c.to, log)
				if code != 0 {
					t.Fatalf("mmio names: exit %d: %s", code, errs)
				}
				var ts, wts []string
				for _, m := range tsRE.FindAllStringSubmatch(out, -1) {
					ts = append(ts, m[1])
				}
				for _, l := range want {
					f := strings.Fields(l)[2]
					wts = append(wts, strings.TrimLeft(strings.Replace(f, ".", "", 1), "0")+"000")
				}
				if strings.Join(ts, " ") != strings.Join(wts, " ") {
					t.Errorf("mmio names: %d accesses, gawk %d", len(ts), len(wts))
				}
			})
		}
	}
	// diff of a window with itself: no difference
	if out, errs, code := runMMIO(t, "mmio", "diff", "--from", "0.45", "--to", "+0.3", log, log); code != 0 || strings.Contains(out, "differ") {
		t.Errorf("mmio diff of a window with itself: exit %d: %s%s", code, out, errs)
	}
	// a marker that is not there, and standard input, are usage errors
	if _, errs, code := runMMIO(t, "mmio", "read", "--from", "mark:nowhere", log); code != 2 || !strings.Contains(errs, "nowhere") {
		t.Errorf("mark:nowhere: exit %d: %s", code, errs)
	}
	if _, errs, code := runMMIO(t, "mmio", "stats", "--from", "1", "-"); code == 0 || !strings.Contains(errs, "standard input") {
		t.Errorf("a window of standard input: exit %d: %s", code, errs)
	}
}

// TestReaderWindowEvents: events read --from/--to against the event
// times LinuxTracepoints' own decoder wrote for its perf.data
// (perf.data.linux.json, meta.time in RFC 3339): the events printed are
// those whose time is in the window (relative to the first event, or a
// wall-clock window), in order; a window after the end prints none; a
// marker the file does not hold is a usage error.
func TestReaderWindowEvents(t *testing.T) {
	const dir = "../../userevents/testdata/linuxtracepoints/"
	js, err := os.ReadFile(dir + "perf.data.linux.json")
	if err != nil {
		t.Skip("no " + dir)
	}
	var times []int64
	for _, m := range regexp.MustCompile(`"time":"([^"]+)"`).FindAllStringSubmatch(string(js), -1) {
		tm, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, tm.UnixNano())
	}
	if len(times) < 500 {
		t.Fatalf("%d times in the JSON", len(times))
	}
	start := times[0]
	wall := func(s string) int64 {
		tm, _ := time.Parse(time.RFC3339Nano, s)
		return tm.UnixNano()
	}
	for _, c := range []struct {
		from, to string
		lo, hi   int64
	}{
		{"1", "+1.5", start + 1e9, start + 2.5e9},
		{"2024-03-28T00:45:14Z", "2024-03-28T00:45:15.5Z", wall("2024-03-28T00:45:14Z"), wall("2024-03-28T00:45:15.5Z")},
		{"", "0.5", start, start + 0.5e9},
		{"10", "20", start + 10e9, start + 20e9}, // after the end
	} {
		var want []string
		for _, tm := range times {
			if tm >= c.lo && tm < c.hi {
				want = append(want, strconv.FormatInt(tm, 10))
			}
		}
		out, errs, code := runIotap(t, "events", "read", "--json", "--from", c.from, "--to", c.to, dir+"perf.data")
		if c.from == "" {
			out, errs, code = runIotap(t, "events", "read", "--json", "--to", c.to, dir+"perf.data")
		}
		if code != 0 {
			t.Fatalf("%s..%s: exit %d: %s", c.from, c.to, code, errs)
		}
		var got []string
		for _, m := range regexp.MustCompile(`"wall_ns":(\d+)`).FindAllStringSubmatch(out, -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != strings.Join(want, " ") || (len(want) == 0) != (c.from == "10") {
			t.Errorf("%s..%s: %d events, LinuxTracepoints' times give %d", c.from, c.to, len(got), len(want))
		}
	}
	if _, errs, code := runIotap(t, "events", "read", "--from", "mark:nothing", dir+"perf.data"); code != 2 || !strings.Contains(errs, "nothing") {
		t.Errorf("mark:nothing: exit %d: %s", code, errs)
	}
}

// TestReaderWindowReport: report --from/--to summarises each trace's
// window (on its own clock), given as files and as a directory: the MMIO
// summary's reads and writes are gawk's count of the log's lines in the
// window, the USB summary's events tshark's count of the packets with
// frame.time_relative in it; an empty window summarises no event.
func TestReaderWindowReport(t *testing.T) {
	for _, tool := range []string{"gawk", "tshark"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed")
		}
	}
	dir := filepath.Join(t.TempDir(), "traces")
	os.Mkdir(dir, 0o700)
	for src, dst := range map[string]string{"../../testdata/mmiotrace/e1000-probe.log": "e1000.log", "../../testdata/usbmon/lab-capture.pcapng": "usb.pcapng"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, dst), b, 0o600)
	}
	log, pcap := filepath.Join(dir, "e1000.log"), filepath.Join(dir, "usb.pcapng")
	for _, c := range []struct {
		from, to     string
		fromUS, toUS int64
		filter       string
	}{
		{"0.5", "10", 500000, 10e6, "frame.time_relative >= 0.5 && frame.time_relative < 10"},
		{"0.2", "+0.4", 200000, 600000, "frame.time_relative >= 0.2 && frame.time_relative < 0.6"},
		{"100", "200", 100e6, 200e6, "frame.time_relative >= 100"}, // empty
	} {
		wantMMIO := len(gawkMMIOWindow(t, log, "", c.fromUS, c.toUS))
		out, err := exec.Command("tshark", "-r", pcap, "-Y", c.filter).Output()
		if err != nil {
			t.Fatal(err)
		}
		wantUSB := strings.Count(string(out), "\n")
		for _, args := range [][]string{{log, pcap}, {dir}} {
			got, errs, code := runIotap(t, append([]string{"report", "--json", "--from", c.from, "--to", c.to}, args...)...)
			if code != 0 {
				t.Fatalf("report %v: exit %d: %s", args, code, errs)
			}
			rw := 0
			if m := regexp.MustCompile(`"kind":"mmio_summary".*?"R":(\d+),"W":(\d+)`).FindStringSubmatch(got); m != nil {
				r, _ := strconv.Atoi(m[1])
				w, _ := strconv.Atoi(m[2])
				rw = r + w
			}
			ev := -1
			if m := regexp.MustCompile(`"kind":"usb_summary","file":"([^"]*)","events":(\d+)`).FindStringSubmatch(got); m != nil {
				ev, _ = strconv.Atoi(m[2])
				if !strings.HasSuffix(m[1], "usb.pcapng") || strings.Contains(m[1], "iotap-window-") {
					t.Errorf("report %v: the USB trace is named %q, not after the original", args, m[1])
				}
			}
			if rw != wantMMIO || (ev != wantUSB && !(ev == -1 && wantUSB == 0)) {
				t.Errorf("report --from %s --to %s %v: %d MMIO accesses, %d USB events; gawk %d, tshark %d", c.from, c.to, args, rw, ev, wantMMIO, wantUSB)
			}
		}
	}
}
