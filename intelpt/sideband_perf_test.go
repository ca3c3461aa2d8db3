package intelpt

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/perfdata"
)

// recordPerf records a perf.data with a software event (no PT needed) of a
// small shell pipeline, with context switch records. It skips when perf
// is not installed (CI installs linux-perf) or cannot record here.
// With pipe, perf writes its pipe format (perf record -o -).
func recordPerf(t *testing.T, pipe bool, extra ...string) string {
	t.Helper()
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed (apt linux-perf)")
	}
	out := filepath.Join(t.TempDir(), "perf.data")
	o := out
	if pipe {
		o = "-"
	}
	args := append([]string{"record", "-q", "-e", "cpu-clock", "--switch-events", "-o", o}, extra...)
	args = append(args, "--", "/bin/sh", "-c", "/bin/true; ls / >/dev/null")
	cmd := exec.Command(perf, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if pipe {
		fh, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		cmd.Stdout = fh
	}
	if err := cmd.Run(); err != nil {
		t.Skipf("perf record does not work here: %v: %s", err, stderr.Bytes())
	}
	return out
}

// perfDRecord is one record line of `perf script -D`.
type perfDRecord struct {
	time uint64
	name string
	rest string
	off  int64
}

var perfDLine = regexp.MustCompile(`^(\d+) 0x([0-9a-f]+) \[0x([0-9a-f]+)\]: PERF_RECORD_([A-Z0-9_]+)(.*)$`)

func perfScriptD(t *testing.T, file string) map[int64]perfDRecord {
	t.Helper()
	m := map[int64]perfDRecord{}
	for _, r := range perfScriptDList(t, file) {
		m[r.off] = r
	}
	return m
}

// perfScriptDList is perf script -D's records in its order (by time),
// each with the offset perf prints (a compressed record's for the
// records inflated from it).
func perfScriptDList(t *testing.T, file string) []perfDRecord {
	t.Helper()
	b, err := exec.Command("perf", "script", "-D", "-i", file).Output()
	if err != nil {
		t.Fatalf("perf script -D: %v", err)
	}
	var m []perfDRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		g := perfDLine.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		tm, _ := strconv.ParseUint(g[1], 10, 64)
		off, _ := strconv.ParseInt(g[2], 16, 64)
		m = append(m, perfDRecord{tm, g[4], g[5], off})
	}
	return m
}

// TestPerfSidebandAgainstPerf reads a perf.data that perf itself recorded
// and checks every sideband record against `perf script -D` (record type,
// time, and the fields perf prints), and the build-id table against
// `perf buildid-list`.
func TestPerfSidebandAgainstPerf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pipe  bool
		extra []string
	}{
		{"file", false, nil},
		{"pipe", true, nil},
		{"buildid-mmap", false, []string{"--buildid-mmap"}},
	} {
		t.Run(tc.name, func(t *testing.T) { testPerfSidebandAgainstPerf(t, recordPerf(t, tc.pipe, tc.extra...), tc.pipe) })
	}
}

func testPerfSidebandAgainstPerf(t *testing.T, file string, pipe bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := PerfSideband(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Lossy() {
		t.Errorf("loss reported for a complete file: %s", s.LossSummary())
	}
	want := perfScriptD(t, file)
	seen := map[int64]bool{}
	kinds := map[string]int{}
	for i := range s.Records {
		r := &s.Records[i]
		off := r.Offset
		if pipe {
			off -= perfPipeHeaderSize // perf counts a pipe's offsets from its first record
		}
		w, ok := want[off]
		if !ok {
			t.Errorf("offset %#x: our %s is not a record for perf", r.Offset, r.Kind())
			continue
		}
		seen[off] = true
		kinds[r.Kind()]++
		if w.name != r.Kind() {
			t.Errorf("offset %#x: %s, perf says %s", r.Offset, r.Kind(), w.name)
			continue
		}
		if r.HasTime && w.time != r.Time {
			t.Errorf("offset %#x %s: time %d, perf says %d", r.Offset, r.Kind(), r.Time, w.time)
		}
		if ok, got := perfDMatches(r, w); !ok {
			t.Errorf("offset %#x %s: %q, perf says %q", r.Offset, r.Kind(), got, w.rest)
		}
	}
	for off, w := range want {
		switch w.name {
		case "MMAP", "MMAP2", "COMM", "FORK", "EXIT", "SWITCH", "SWITCH_CPU_WIDE", "AUX", "ITRACE_START", "LOST":
			if !seen[off] {
				t.Errorf("perf's %s at %#x is missing", w.name, off)
			}
		}
	}
	for _, k := range []string{"MMAP2", "COMM", "FORK", "EXIT", "SWITCH"} {
		if kinds[k] == 0 {
			t.Errorf("no %s record compared (kinds: %v)", k, kinds)
		}
	}
	t.Logf("%d sideband records compared: %v; %d samples", len(s.Records), kinds, s.Samples)

	// perf's build-id table.
	out, err := exec.Command("perf", "buildid-list", "-i", file).Output()
	if err != nil {
		t.Fatalf("perf buildid-list: %v", err)
	}
	// perf lists its build-id table, or (--buildid-mmap) the build-ids of
	// the MMAP2 records; in pipe mode it lists names without build-ids.
	ours := map[string]bool{}
	for _, e := range s.BuildIDs {
		ours[e.Hex()+" "+e.Filename] = true
	}
	for _, r := range s.Records {
		if r.BuildID != nil {
			ours[r.BuildIDHex()+" "+strings.TrimSuffix(r.Filename, "_text")] = true
		}
	}
	compared := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, name, _ := strings.Cut(strings.TrimSpace(l), " ")
		if len(id) != 40 {
			continue
		}
		compared++
		if !ours[id+" "+strings.TrimSpace(name)] {
			t.Errorf("perf buildid-list: %s: not ours (%v)", l, ours)
		}
	}
	if !pipe && compared == 0 {
		t.Error("perf listed no build-ids: nothing compared")
	}
}

// TestPerfSidebandTruncated cuts a real perf.data at every 97th byte: no
// panic, the records before the cut are the complete file's, and the cut
// is reported.
func TestPerfSidebandTruncated(t *testing.T) {
	file := recordPerf(t, false)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	full, err := PerfSideband(b)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := perfdata.OpenBytes(b)
	for n := int(f.Data.Offset) + 1; n < int(f.Data.Offset+f.Data.Size); n += 97 {
		s, err := PerfSideband(b[:n])
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if s.Truncated == "" {
			t.Fatalf("cut at %d: not reported as truncated", n)
		}
		for i, r := range s.Records {
			if r.Offset+int64(r.Size) > int64(n) || fmt.Sprint(r) != fmt.Sprint(full.Records[i]) {
				t.Fatalf("cut at %d: record %d differs from the full file's", n, i)
			}
		}
	}
}

// perfDMatches reports whether our sideband record says what perf script
// -D's line w says (got: ours, formatted as perf does).
func perfDMatches(r *SidebandRecord, w perfDRecord) (bool, string) {
	var got string
	switch r.Type {
	case PerfRecordMmap2:
		got = fmt.Sprintf(" %d/%d: [%#x(%#x) @ %#x ", r.PID, r.TID, r.Addr, r.Len, r.PgOff)
		if r.PgOff == 0 {
			got = fmt.Sprintf(" %d/%d: [%#x(%#x) @ 0 ", r.PID, r.TID, r.Addr, r.Len)
		}
		if r.BuildID != nil {
			got = strings.TrimSuffix(got, " ") + " <" + r.BuildIDHex() + ">]"
		}
		return strings.HasPrefix(w.rest, got) && strings.HasSuffix(w.rest, " "+r.Filename), got + r.Filename
	case PerfRecordMmap:
		got = fmt.Sprintf(" %d/%d: [%#x(%#x) @ %#x]: x %s", r.PID, r.TID, r.Addr, r.Len, r.PgOff, r.Filename)
	case PerfRecordComm:
		got = fmt.Sprintf(": %s:%d/%d", r.Comm, r.PID, r.TID)
		if r.Exec() {
			got = fmt.Sprintf(" exec: %s:%d/%d", r.Comm, r.PID, r.TID)
		}
	case PerfRecordFork, PerfRecordExit:
		got = fmt.Sprintf("(%d:%d):(%d:%d)", r.PID, r.TID, r.PPID, r.PTID)
	case PerfRecordSwitch:
		got = " IN         "
		if r.SwitchOut() {
			got = " OUT        "
			if r.Misc&PerfMiscPreempt != 0 {
				got = " OUT preempt"
			}
		}
	default:
		return true, ""
	}
	return got == w.rest, got
}

// TestPerfSidebandCompressed records with perf record -z (zstd-compressed
// records, one zstd stream across them) and checks the sideband read
// from it against perf script -D on the same file: every sideband record
// perf shows is ours, with the same time and fields, and ours are no more
// (perf shows them by time with the compressed record's offset: compared
// as multisets). PerfDataPT reads the file too (this machine may have no
// Intel PT: then no stream, and no error).
func TestPerfSidebandCompressed(t *testing.T) {
	z := recordPerf(t, false, "-z")
	b, err := os.ReadFile(z)
	if err != nil {
		t.Fatal(err)
	}
	s, err := PerfSideband(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Lossy() {
		t.Fatalf("loss reported for a complete file: %s", s.LossSummary())
	}
	f, err := perfdata.OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	rd := f.Records()
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
	}
	if rd.Compressed() == 0 {
		t.Fatal("perf record -z wrote no compressed record")
	}
	sideband := map[string]bool{"MMAP": true, "MMAP2": true, "COMM": true, "FORK": true, "EXIT": true, "SWITCH": true}
	var want []perfDRecord
	for _, w := range perfScriptDList(t, z) {
		if sideband[w.name] {
			want = append(want, w)
		}
	}
	used := make([]bool, len(want))
	kinds := map[string]int{}
	for i := range s.Records {
		r := &s.Records[i]
		if !sideband[r.Kind()] {
			continue
		}
		found := false
		for j, w := range want {
			if !used[j] && w.name == r.Kind() && (!r.HasTime || w.time == r.Time) {
				if ok, _ := perfDMatches(r, w); ok {
					used[j], found = true, true
					break
				}
			}
		}
		if !found {
			_, got := perfDMatches(r, perfDRecord{})
			t.Errorf("our %s at %d (%q) is not perf's", r.Kind(), r.Time, got)
		}
		kinds[r.Kind()]++
	}
	for j, w := range want {
		if !used[j] {
			t.Errorf("perf's %s at %d%s is missing", w.name, w.time, w.rest)
		}
	}
	for _, k := range []string{"MMAP2", "COMM", "FORK", "EXIT", "SWITCH"} {
		if kinds[k] == 0 {
			t.Errorf("no %s record compared (kinds: %v)", k, kinds)
		}
	}
	t.Logf("%d compressed records; %d sideband records compared: %v", rd.Compressed(), len(want), kinds)
	tr, err := PerfDataPT(b)
	if err != nil || len(tr.Streams) != 0 || tr.Lossy() {
		t.Errorf("PerfDataPT of perf record -z: %v, %+v", err, tr)
	}
}
