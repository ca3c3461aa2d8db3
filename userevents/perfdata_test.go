package userevents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/userevents/eventheader"
)

// ltDir holds LinuxTracepoints' test output (MIT, see its LICENSE): perf
// record in file and pipe mode, and what their perf-decode printed.
const ltDir = "testdata/linuxtracepoints"

// eachSample reads every tracepoint sample of the perf.data file at path
// and calls fn with it; it returns the reader (for its stats).
func eachSample(t testing.TB, path string, fn func(*Recorded)) *PerfDataReader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := NewPerfDataReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var rec Recorded
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return r
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(&rec)
	}
}

// readPerfData decodes every tracepoint sample of path to AppendJSON lines.
func readPerfData(t testing.TB, path string) ([]string, *PerfDataReader) {
	t.Helper()
	var out []string
	r := eachSample(t, path, func(rec *Recorded) { out = append(out, string(perfDecodeJSON(nil, rec))) })
	return out, r
}

// perfDecodeJSON writes an EventHeader event in the shape of
// LinuxTracepoints' decoder perf-decode (eventheader.AppendJSON), to
// compare with its output; other events as {"name":NAME}.
func perfDecodeJSON(dst []byte, rec *Recorded) []byte {
	if rec.EventHeader == nil {
		return append(strconv.AppendQuote(append(dst, `{"name":`...), rec.Name), '}')
	}
	pid, tid := rec.Process, rec.Thread
	if tid == 0 {
		pid, tid = rec.PID, rec.PID
	}
	return eventheader.AppendJSON(dst, rec.EventHeader, eventheader.Meta{TS: rec.TS, Wall: rec.Wall, CPU: rec.CPU, PID: pid, TID: tid})
}

// normJSON decodes one JSON object with exact numbers, drops the trace
// clock "ts" of "meta" (perf-decode writes only the wall-clock "time",
// which iotap writes too, from the file's clock data) and folds runs of U+FFFD into one (perf-decode writes code
// points beyond Unicode as invalid UTF-8 sequences, iotap as one U+FFFD).
func normJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	for bytes.Contains(b, []byte("\uFFFD\uFFFD")) {
		b = bytes.ReplaceAll(b, []byte("\uFFFD\uFFFD"), []byte("\uFFFD"))
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if meta, ok := m["meta"].(map[string]any); ok {
		delete(meta, "ts")
	}
	return m
}

// TestPerfDataLinuxTracepoints decodes LinuxTracepoints' own test files
// (file and pipe mode) and compares every EventHeader event with what
// their decoder, perf-decode, printed for it: names, every field of every
// encoding and format (integers, hex, errno, time, floats, booleans,
// characters, strings of 8/16/32-bit units with and without BOM, binary,
// UUIDs, ports, IPv4/IPv6, arrays, structs) and the meta object (cpu,
// pid, tid, id, version, level, keyword, opcode, tag, activity ids).
func TestPerfDataLinuxTracepoints(t *testing.T) {
	if _, err := os.Stat(ltDir); err != nil {
		t.Skip("no " + ltDir + ")")
	}
	for _, name := range []string{"perf.data", "pipe.data"} {
		t.Run(name, func(t *testing.T) {
			lines, r := readPerfData(t, filepath.Join(ltDir, name))
			want, err := os.ReadFile(filepath.Join(ltDir, name+".linux.json"))
			if err != nil {
				t.Fatal(err)
			}
			// Their file: a BOM, then "NAME": [ {event}, ... ] without the
			// outer braces; one event per line.
			var theirs [][]byte
			for _, l := range bytes.Split(want, []byte("\n")) {
				l = bytes.TrimSpace(l)
				if bytes.HasPrefix(l, []byte(`{"n":`)) {
					theirs = append(theirs, bytes.TrimSuffix(l, []byte(",")))
				}
			}
			var mine []string
			switches := 0
			for _, l := range lines {
				if strings.HasPrefix(l, `{"name":"sched_switch"`) {
					switches++
					continue
				}
				mine = append(mine, l)
			}
			var theirSwitches int
			var theirEH [][]byte
			for _, l := range theirs {
				if bytes.HasPrefix(l, []byte(`{"n":"sched:sched_switch"`)) {
					theirSwitches++
					continue
				}
				theirEH = append(theirEH, l)
			}
			if len(mine) != len(theirEH) || switches != theirSwitches || len(mine) < 200 {
				t.Fatalf("%d EventHeader events and %d sched_switch, perf-decode %d and %d", len(mine), switches, len(theirEH), theirSwitches)
			}
			bad := 0
			for i := range mine {
				a, b := normJSON(t, []byte(mine[i])), normJSON(t, theirEH[i])
				if !reflect.DeepEqual(a, b) {
					bad++
					if bad <= 5 {
						t.Errorf("event %d:\n iotap       %s\n perf-decode %s", i, mine[i], theirEH[i])
					}
				}
			}
			st := r.Stats()
			if bad != 0 || st.Bad != 0 || st.Lost != 0 || st.NoFormat != 0 {
				t.Errorf("%d of %d events differ; stats %+v, errors %v", bad, len(mine), st, r.Errors)
			}
		})
	}
}

// TestPerfDataPerfScript records kernel tracepoints with perf on this
// machine (every process: other programs' exits are in it too) and
// compares the samples iotap decodes with perf script's: the same lines, the thread, CPU, time (perf script's microseconds)
// and the fields, formatted with the event's print format.
func TestPerfDataPerfScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs perf record")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed (apt-get install linux-perf)")
	}
	// -z: PERF_RECORD_COMPRESSED (one zstd stream across records);
	// -k: a chosen clock, with HEADER_CLOCK_DATA relating it to the
	// wall clock.
	for _, mode := range []struct{ name, flags string }{{"plain", ""}, {"zstd", "-z"}, {"clockid", "-z -k CLOCK_MONOTONIC"}} {
		t.Run(mode.name, func(t *testing.T) { perfScriptCompare(t, perf, strings.Fields(mode.flags)) })
	}
}

// perfScriptCompare records with perf record and flags, and compares what
// iotap reads with perf script.
func perfScriptCompare(t *testing.T, perf string, flags []string) {
	data := filepath.Join(t.TempDir(), "perf.data")
	args := []string{"record", "-q", "-e", "sched:sched_process_fork", "-e", "sched:sched_process_exit", "-a", "-o", data}
	args = append(args, flags...)
	rec := exec.Command(perf, append(args, "--", "sh", "-c", "for i in 1 2 3 4 5 6 7 8; do /bin/true; done")...)
	if out, err := rec.CombinedOutput(); err != nil {
		t.Skipf("perf record cannot trace here (%v): %s", err, out)
	}
	script, err := exec.Command(perf, "script", "-i", data, "-F", "tid,cpu,time,event,trace").Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(script)), "\n") {
		want = append(want, strings.Join(strings.Fields(l), " "))
	}
	f, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := NewPerfDataReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var ev Recorded
	for {
		err := r.Read(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, schedScriptLine(&ev))
	}
	// perf script sorts by time; iotap returns file order (per CPU, in
	// rounds): compare the two as multisets.
	sort.Strings(got)
	sort.Strings(want)
	if len(got) < 16 || len(got) != len(want) {
		t.Fatalf("iotap %d samples, perf script %d:\n%s", len(got), len(want), script)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("sample %d:\n iotap       %s\n perf script %s", i, got[i], want[i])
		}
	}
	if st := r.Stats(); slices.Contains(flags, "-z") && st.Compressed == 0 {
		t.Errorf("perf record -z wrote no compressed record? stats %+v", st)
	}
	if slices.Contains(flags, "-z") {
		// Stopping before the end: Close ends the decoder's goroutine.
		before := runtime.NumGoroutine()
		f2, err := os.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		defer f2.Close()
		r2, err := NewPerfDataReader(f2, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		var one Recorded
		if err := r2.Read(&one); err != nil {
			t.Fatal(err)
		}
		r2.Close()
		for i := 0; runtime.NumGoroutine() > before && i < 100; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines after Close, %d before the reader", n, before)
		}
	}
	off, ok := r.WallClock()
	if !slices.Contains(flags, "-k") {
		return
	}
	if !ok {
		t.Fatalf("-k: no clock data read: warnings %v", r.Warnings)
	}
	// perf's own reading of the clock data: "# reference time: DATE =
	// SEC.USEC (TOD) = SEC.NSEC (monotonic)".
	hdr, err := exec.Command(perf, "report", "-i", data, "--header-only").Output()
	if err != nil {
		t.Fatalf("perf report --header-only: %v", err)
	}
	m := regexp.MustCompile(`reference time: .* = (\d+)\.(\d{6}) \(TOD\) = (\d+)\.(\d{9}) \(`).FindSubmatch(hdr)
	if m == nil {
		t.Fatalf("no reference time in perf report's header:\n%s", hdr)
	}
	num := func(b []byte) int64 { n, _ := strconv.ParseInt(string(b), 10, 64); return n }
	tod := num(m[1])*1e9 + num(m[2])*1e3
	clk := num(m[3])*1e9 + num(m[4])
	if d := off - (tod - clk); d < 0 || d >= 1000 {
		t.Errorf("wall clock offset %d ns, perf report's reference time gives %d (TOD in µs)", off, tod-clk)
	}
}

// schedScriptLine prints a sched_process_fork or sched_process_exit
// sample as perf script -F tid,cpu,time,event,trace does (fields
// separated by single spaces).
func schedScriptLine(ev *Recorded) string {
	v := map[string]string{}
	for _, x := range ev.Values {
		if x.Field.String {
			v[x.Field.Name] = string(x.Bytes)
		} else {
			v[x.Field.Name] = fmt.Sprint(x.Any())
		}
	}
	var trace string
	switch ev.Name {
	case "sched_process_fork":
		trace = fmt.Sprintf("comm=%s pid=%s child_comm=%s child_pid=%s", v["parent_comm"], v["parent_pid"], v["child_comm"], v["child_pid"])
	case "sched_process_exit":
		trace = fmt.Sprintf("comm=%s pid=%s prio=%s", v["comm"], v["pid"], v["prio"])
		if g, ok := v["group_dead"]; ok { // Linux 6.x: print fmt "group_dead=%s", ? "true" : "false"
			trace += fmt.Sprintf(" group_dead=%v", g != "0")
		}
	}
	line := fmt.Sprintf("%d [%03d] %d.%06d: %s:%s: %s", ev.Thread, ev.CPU, ev.TS/1e9, ev.TS%1e9/1e3, ev.System, ev.Name, trace)
	return strings.Join(strings.Fields(line), " ")
}

// TestPerfDataBad: broken files are errors with their byte offset, never
// panics; unknown feature sections are warnings and reading goes on.
func TestPerfDataBad(t *testing.T) {
	if _, err := NewPerfDataReader(strings.NewReader("PERFILE"), -1); err == nil {
		t.Error("short header accepted")
	}
	if _, err := NewPerfDataReader(strings.NewReader("NOTPERF!12345678"), -1); err == nil || !strings.Contains(err.Error(), "not a perf.data") {
		t.Errorf("bad magic: %v", err)
	}
	if _, err := os.Stat(ltDir); err != nil {
		t.Skip("no " + ltDir)
	}
	b, err := os.ReadFile(filepath.Join(ltDir, "perf.data"))
	if err != nil {
		t.Fatal(err)
	}
	// An unknown feature bit (200) with its table entry appended: a warning.
	c := append([]byte{}, b...)
	c[72+200/8] |= 1 << (200 % 8)
	// The table has one entry per bit in bit order: bit 200 is the last,
	// so its entry goes after the existing ones. Feature sections live
	// after the table, so insert 16 bytes there by pointing it at itself.
	n := 0
	for bit := 1; bit < 200; bit++ {
		if c[72+bit/8]&(1<<(bit%8)) != 0 {
			n++
		}
	}
	dOff := int(leU64(c[40:]))
	dSize := int(leU64(c[48:]))
	at := dOff + dSize + 16*n
	ins := make([]byte, 16)
	c = append(c[:at], append(ins, c[at:]...)...)
	// Shift every other section offset in the table past the insertion.
	for i := 0; i < n; i++ {
		o := dOff + dSize + 16*i
		if v := leU64(c[o:]); int(v) >= at {
			putLeU64(c[o:], v+16)
		}
	}
	r, err := NewPerfDataReader(bytes.NewReader(c), int64(len(c)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "unknown feature section 200") {
		t.Errorf("warnings %q", r.Warnings)
	}
	var rec Recorded
	if err := r.Read(&rec); err != nil || rec.Name == "" {
		t.Errorf("first sample after an unknown feature: %+v %v", rec, err)
	}
	// Truncated in the data section: an error with the offset of the
	// record cut short.
	cut := b[:dOff+dSize/2]
	r, err = NewPerfDataReader(bytes.NewReader(cut), int64(len(cut)))
	if err == nil {
		for err == nil {
			err = r.Read(&rec)
		}
	}
	var pe *PerfDataError
	if !errors.As(err, &pe) {
		t.Errorf("truncated: %v", err)
	}
}

func leU64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func putLeU64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}
