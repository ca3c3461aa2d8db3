package userevents

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// runJob runs j on its file and returns the lines it wrote.
func runJob(t *testing.T, j ReadJob) []string {
	t.Helper()
	if err := j.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := OpenPerfData(j.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	n, err := j.Run(context.Background(), r, &b)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if b.Len() == 0 {
		lines = nil
	}
	samples := uint64(len(lines))
	if j.JSON {
		samples--
	}
	if n != samples {
		t.Errorf("Run says %d samples, wrote %d", n, samples)
	}
	return lines
}

// The filter of 'events read -Y' keeps the samples LinuxTracepoints'
// perf-decode lists with those values; the window keeps the samples whose
// stamps are inside it.
func TestReadJob(t *testing.T) {
	path := filepath.Join(ltDir, "perf.data")
	oracle, err := os.ReadFile(path + ".linux.json")
	if err != nil {
		t.Skip(err)
	}
	want := 0
	for _, l := range bytes.Split(oracle, []byte("\n")) {
		if bytes.Contains(l, []byte(`"n":"sched:sched_switch"`)) && bytes.Contains(l, []byte(`"next_comm":"swapper/0"`)) {
			want++
		}
	}
	if want == 0 {
		t.Fatal("the oracle lists no such sample")
	}
	lines := runJob(t, ReadJob{Path: path, Filter: `event.name == "sched_switch" && event.next_comm == "swapper/0"`, JSON: true})
	if len(lines) != want+1 {
		t.Errorf("%d samples kept, perf-decode lists %d", len(lines)-1, want)
	}
	if len(lines) > 0 && !strings.Contains(lines[0], `"kind":"input"`) || !strings.Contains(lines[0], `"format":"perf.data"`) {
		t.Errorf("first line is not the input record: %s", lines[0])
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, `"next_comm":"swapper/0"`) {
			t.Errorf("kept %s", l)
		}
	}

	// A window of the samples' own stamps: [third, tenth) in time order.
	var ts []uint64
	eachSample(t, path, func(rec *Recorded) { ts = append(ts, rec.TS) })
	sorted := append([]uint64(nil), ts...)
	slices.Sort(sorted)
	lo, hi := sorted[2], sorted[9]
	inside := 0
	for _, v := range ts {
		if v >= lo && v < hi {
			inside++
		}
	}
	spec, err := timerange.ParseSpec("@"+stamp(lo), "@"+stamp(hi))
	if err != nil {
		t.Fatal(err)
	}
	if got := runJob(t, ReadJob{Path: path, Window: spec}); len(got) != inside {
		t.Errorf("window [%d, %d): %d samples, want %d", lo, hi, len(got), inside)
	}
}

// stamp is ns as seconds with nine decimals.
func stamp(ns uint64) string {
	s := strconv.FormatUint(ns, 10)
	for len(s) < 10 {
		s = "0" + s
	}
	return s[:len(s)-9] + "." + s[len(s)-9:]
}

// Bad arguments are *ArgError naming which, before the file is read.
func TestReadJobArgs(t *testing.T) {
	path := filepath.Join(ltDir, "perf.data")
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		job  ReadJob
		arg  string
		text string
	}{
		{ReadJob{Path: path, Filter: "event.name =="}, "filter", "-Y: "},
		{ReadJob{Path: path, Window: mustSpec(t, "mark:nosuchmarker", "")}, "window", path + ": --from: mark:nosuchmarker: no marker"},
	} {
		err := c.job.Prepare(context.Background())
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != c.arg || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%+v: %v, want an ArgError %q saying %q", c.job, err, c.arg, c.text)
		}
	}
}

func mustSpec(t *testing.T, from, to string) timerange.Spec {
	t.Helper()
	s, err := timerange.ParseSpec(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPerfDataStatsLoss(t *testing.T) {
	for _, c := range []struct {
		st   PerfDataStats
		want string
	}{
		{PerfDataStats{Events: 9, NoFormat: 3}, ""},
		{PerfDataStats{Lost: 2}, "2 event(s) lost, 0 undecodable"},
		{PerfDataStats{Bad: 1}, "0 event(s) lost, 1 undecodable"},
	} {
		if got := c.st.Loss(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}

// A file that is no perf.data is refused naming it, whether the window
// reads it first (Prepare), Open does or the samples do (Run).
func TestReadJobNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte("hello\n"), 0o600)
	want := path + ": userevents: perf.data at byte 0: shorter than a perf.data header"
	j := ReadJob{Path: path, Window: mustSpec(t, "1", "")}
	var pe *PerfDataError
	if err := j.Prepare(context.Background()); err == nil || err.Error() != want || !errors.As(err, &pe) {
		t.Errorf("Prepare: %v, want %q", err, want)
	}
	j = ReadJob{Path: path}
	if _, err := j.Open(); err == nil || err.Error() != want || !errors.As(err, &pe) {
		t.Errorf("Open: %v, want %q", err, want)
	}
	// A perf.data cut short: Run's error names it too.
	b, err := os.ReadFile(filepath.Join(ltDir, "perf.data"))
	if err != nil {
		t.Skip(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.data")
	os.WriteFile(cut, b[:len(b)*2/3], 0o600)
	// read for its markers, the window's error names it once and is no
	// *ArgError (the file is bad, not the window)
	j = ReadJob{Path: cut, Window: mustSpec(t, "mark:x", "")}
	if err := j.Prepare(context.Background()); err == nil || errors.As(err, new(*ArgError)) ||
		!strings.HasPrefix(err.Error(), cut+": userevents: perf.data at byte ") || strings.Count(err.Error(), cut) != 1 {
		t.Errorf("a perf.data cut short, a marker window: %v", err)
	}
	j = ReadJob{Path: cut}
	if err := j.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := j.Open()
	if err == nil {
		defer r.Close()
		_, err = j.Run(context.Background(), r, io.Discard)
	}
	if err == nil || !strings.HasPrefix(err.Error(), cut+": userevents: perf.data at byte ") {
		t.Errorf("a perf.data cut short: %v", err)
	}
}

// TestReadJobPastEndOutOfOrder: PastEnd looks at the file's latest
// sample, not the last one read: the samples of a perf.data come in
// per-CPU rounds, out of time order. Samples at 1 s, 5 s and then 2 s
// with --from @3: the 5 s sample is kept, so no past-end; with --from
// @6 all are before it.
func TestReadJobPastEndOutOfOrder(t *testing.T) {
	for _, c := range []struct {
		from    string
		pastEnd bool
	}{{"@3", false}, {"@6", true}} {
		j := ReadJob{Path: "unread.data", Window: mustSpec(t, c.from, "")}
		if err := j.Prepare(context.Background()); err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, sec := range []uint64{1, 5, 2} {
			if j.keep(&Recorded{TS: sec * 1e9}) {
				kept++
			}
		}
		if got := j.PastEnd(); (got != "") != c.pastEnd || (kept > 0) == (got != "") {
			t.Errorf("--from %s over 1 s, 5 s, 2 s: PastEnd %q with %d kept, want past end %v", c.from, got, kept, c.pastEnd)
		}
	}
}
