package mmiotrace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ReadLog's jobs checked against the log's own bytes: the whole log is
// written back byte for byte (decompressed by the zstd command for a
// compressed one), -Y/-c keep the lines a plain text scan selects, the
// check counts the lines by their first word, and a mapped file gives
// what the stream gives.
func TestReadLogJobs(t *testing.T) {
	const plain = "testdata/e1000-bind.log"
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, path string, opt ReadOptions) (string, []string) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out bytes.Buffer
		lost, err := ReadLog(context.Background(), f, &out, opt)
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), lost
	}
	for _, workers := range []int{1, 3} {
		if got, lost := read(t, plain, ReadOptions{Workers: workers}); got != string(raw) || lost != nil {
			t.Errorf("workers %d: %d bytes of %d, lost %v", workers, len(got), len(raw), lost)
		}
	}
	if zstd, err := exec.LookPath("zstd"); err == nil {
		want, err := exec.Command(zstd, "-dc", "../testdata/capture/mmio.log.zst").Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := read(t, "../testdata/capture/mmio.log.zst", ReadOptions{}); got != string(want) {
			t.Errorf("zstd log: %d bytes, zstd -d gives %d", len(got), len(want))
		}
	}
	// The first 5 writes, by a scan of the lines.
	var writes []string
	counts := map[string]int{}
	for _, l := range strings.SplitAfter(string(raw), "\n") {
		if w := strings.Fields(l); len(w) > 0 {
			counts[w[0]]++
		}
		if strings.HasPrefix(l, "W ") && len(writes) < 5 {
			writes = append(writes, l)
		}
	}
	keepW := func(r *Record) bool { return r.Kind == KindWrite }
	for _, path := range []string{"", plain} {
		got, _ := read(t, plain, ReadOptions{Keep: keepW, Count: 5, Path: path})
		if got != strings.Join(writes, "") {
			t.Errorf("Keep W, Count 5 (path %q):\n%s\nwant:\n%s", path, got, strings.Join(writes, ""))
		}
		check, _ := read(t, plain, ReadOptions{Check: true, Path: path})
		for _, k := range []string{"R", "W", "MAP", "MARK"} {
			if line := k + ":"; !strings.Contains(check, "\n"+line+strings.Repeat(" ", 8-len(line))+" "+itoa(counts[k])+"\n") {
				t.Errorf("check (path %q): no %q count %d in\n%s", path, k, counts[k], check)
			}
		}
	}
	// Mapped: in is not read at all.
	var out bytes.Buffer
	if _, err := ReadLog(context.Background(), strings.NewReader(""), &out, ReadOptions{Count: 3, Path: plain}); err != nil || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("mapped, count 3: %q %v", out.String(), err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// NDJSON starts with the input record; a cut log and lost events are the
// loss ReadLog returns, in every job.
func TestReadLogJSONAndLoss(t *testing.T) {
	raw, _ := os.ReadFile("testdata/kinds.log")
	cut := raw[:len(raw)-3]
	for _, opt := range []ReadOptions{{JSON: true, File: "k.log", Format: "mmiotrace log"}, {JSON: true, Count: 1000, File: "k.log"}, {Check: true}} {
		var out bytes.Buffer
		lost, err := ReadLog(context.Background(), bytes.NewReader(cut), &out, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(lost) != 2 || !strings.Contains(lost[0], "lost events") || !strings.Contains(lost[1], "the log is cut") {
			t.Errorf("%+v: lost %q", opt, lost)
		}
		if !opt.JSON {
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !strings.HasPrefix(lines[0], `{"kind":"input","schema":1,"source":"mmio","file":"k.log",`) {
			t.Errorf("first line %s", lines[0])
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("not JSON: %s", l)
			}
		}
	}
}

// TestReadLogMapsOnlyRegular: ReadLog maps Path only when it is a regular
// file and no Progress is asked for; otherwise (Progress, "-", a
// directory) it reads in, and Progress sees every byte read. in holds the
// first 40 lines of the log named by Path, so the summary says which was
// read.
func TestReadLogMapsOnlyRegular(t *testing.T) {
	const plain = "testdata/e1000-bind.log"
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	part := strings.Join(strings.SplitAfter(string(raw), "\n")[:40], "")
	check := func(t *testing.T, in string, opt ReadOptions) string {
		t.Helper()
		var out bytes.Buffer
		opt.Check = true
		if _, err := ReadLog(context.Background(), strings.NewReader(in), &out, opt); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	whole, first40 := check(t, string(raw), ReadOptions{}), check(t, part, ReadOptions{})
	if whole == first40 {
		t.Fatalf("the summaries of the log and of its first 40 lines are the same:\n%s", whole)
	}
	if got := check(t, part, ReadOptions{Path: plain}); got != whole {
		t.Errorf("a regular file, no progress: not mapped:\n%s", got)
	}
	var read int64
	if got := check(t, part, ReadOptions{Path: plain, Progress: func(n int64) { read = n }}); got != first40 || read != int64(len(part)) {
		t.Errorf("with progress: mapped, or %d bytes said of %d:\n%s", read, len(part), got)
	}
	for _, p := range []string{"-", "testdata"} {
		if got := check(t, part, ReadOptions{Path: p}); got != first40 {
			t.Errorf("path %q: mapped:\n%s", p, got)
		}
	}
}

// longLineLog is a copy of the e1000 probe log in dir whose line 21 is
// longer than DefaultMaxLine: a bad line that fails every reader.
func longLineLog(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(b, []byte("\n"))
	lines[20] = bytes.Repeat([]byte("x"), DefaultMaxLine+1)
	p := filepath.Join(dir, "long.log")
	if err := os.WriteFile(p, bytes.Join(lines, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadLogNamesBadLine: ReadLog's error for a bad line names the log
// (ReadOptions.File), whole or record by record, as 'iotap mmio stats'
// names it; it said "mmiotrace: line 21: ..." with no file.
func TestReadLogNamesBadLine(t *testing.T) {
	p := longLineLog(t, t.TempDir())
	// Whole (mapped, ConvertLog) and record by record from a stream.
	for _, opt := range []ReadOptions{{Path: p}, {Check: true}, {Count: 1 << 20}} {
		opt.File = p
		in, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ReadLog(context.Background(), in, io.Discard, opt)
		in.Close()
		if want := p + ": mmiotrace: line 21: bad mmiotrace line: line longer than"; err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrFormat) {
			t.Errorf("path %q, check %v, count %d: %v; want %q...", opt.Path, opt.Check, opt.Count, err, want)
		}
	}
	// A record that does not parse, not skipped (KeepGoing unset).
	b, _ := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	lines := bytes.Split(b, []byte("\n"))
	lines[20] = []byte("R 4 garbage here")
	_, err := ReadLog(context.Background(), bytes.NewReader(bytes.Join(lines, []byte("\n"))), io.Discard, ReadOptions{File: "bad.log"})
	if want := "bad.log: mmiotrace: line 21: bad mmiotrace line: R record: bad timestamp"; err == nil || err.Error() != want {
		t.Errorf("%v; want %q", err, want)
	}
}
