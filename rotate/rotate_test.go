package rotate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// logLines is a log of two header lines and n records of varied length.
func logLines(n int) []string {
	lines := []string{"VERSION 20070824", "PCIDEV 0018 8086100e 0b"}
	for i := 0; i < n; i++ {
		lines = append(lines, fmt.Sprintf("R 4 %d.%06d 1 0xfebc0008 0x%x 0x0 0%s", i/100, i, i, strings.Repeat(" ", i%37)))
	}
	return lines
}

func isHeader(l []byte) bool {
	return bytes.HasPrefix(l, []byte("VERSION ")) || bytes.HasPrefix(l, []byte("PCIDEV "))
}

// Lines written in random pieces to a ring of files: every file starts
// with the header lines, the records of the files in order are the log's
// records, each once, and each file but the last holds Size bytes and less
// than one line more; with Files 3 the newest 3 are the log's last records.
func TestRotatingLines(t *testing.T) {
	lines := logLines(3000)
	log := []byte(strings.Join(lines, "\n") + "\n")
	maxLine := 0
	for _, l := range lines {
		maxLine = max(maxLine, len(l)+1)
	}
	const size = 8 << 10
	for _, keep := range []int{0, 3} {
		t.Run(fmt.Sprint("files", keep), func(t *testing.T) {
			dir := t.TempDir()
			var onLine int
			files, err := NewFiles(Options{Path: filepath.Join(dir, "x.log"), Size: size, Files: keep})
			if err != nil {
				t.Fatal(err)
			}
			l, err := NewRotatingLines(files, LineOptions{Header: isHeader, OnLine: func([]byte) { onLine++ }})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, uint64(keep)))
			for p := log; len(p) > 0; {
				n := min(len(p), 1+rng.IntN(300))
				if _, err := l.Write(p[:n]); err != nil {
					t.Fatal(err)
				}
				p = p[n:]
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if onLine != len(lines) {
				t.Errorf("OnLine saw %d lines, want %d", onLine, len(lines))
			}
			names, _ := filepath.Glob(filepath.Join(dir, "x_*.log"))
			sort.Strings(names)
			if got := files.Names(); strings.Join(got, " ") != strings.Join(names, " ") {
				t.Fatalf("Names %v, on disk %v", got, names)
			}
			if keep > 0 && (len(names) != keep || files.Started() <= keep) {
				t.Fatalf("%d files kept of %d started, want %d", len(names), files.Started(), keep)
			}
			var records []string
			for i, n := range names {
				b, err := os.ReadFile(n)
				if err != nil {
					t.Fatal(err)
				}
				got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
				if len(got) < 3 || got[0] != lines[0] || got[1] != lines[1] {
					t.Fatalf("%s does not start with the header: %q", n, got[:min(3, len(got))])
				}
				if i < len(names)-1 && (len(b) < size || len(b) >= size+maxLine) {
					t.Errorf("%s: %d bytes for Size %d", n, len(b), size)
				}
				if fi, _ := os.Stat(n); fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v", n, fi.Mode())
				}
				records = append(records, got[2:]...)
			}
			want := lines[2:]
			if keep == 0 && len(records) != len(want) {
				t.Fatalf("%d records in the files, want %d", len(records), len(want))
			}
			want = want[len(want)-len(records):]
			for i := range records {
				if records[i] != want[i] {
					t.Fatalf("record %d: %q, want %q", i, records[i], want[i])
				}
			}
		})
	}
}

// Duration: a new file once the current one is Duration old (by the
// clock of Options.Now), and FileName keeps a compression suffix last.
func TestFilesDuration(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.Local)
	files, err := NewFiles(Options{Path: filepath.Join(dir, "e.ndjson"), Duration: 10 * time.Second, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewRotatingLines(files, LineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 35; i++ { // one line a second
		fmt.Fprintf(l, "%d\n", i)
		clock = clock.Add(time.Second)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	names := files.Names()
	if len(names) != 4 {
		t.Fatalf("%d files for 35 s by 10 s: %v", len(names), names)
	}
	for i, n := range names {
		b, _ := os.ReadFile(n)
		if want := 10; i < 3 && strings.Count(string(b), "\n") != want {
			t.Errorf("%s: %q", n, b)
		}
	}
	if got := filepath.Base(names[1]); got != "e_00002_20261127120010.ndjson" {
		t.Errorf("second file %s", got)
	}
	o := Options{Path: "/d/x.log.zst"}
	if got := o.FileName(3, clock); got != "/d/x_00003_20261127120035.log.zst" {
		t.Errorf("FileName %s", got)
	}
	if err := (Options{Path: "-", Size: 1}).Check(); err == nil {
		t.Error("Check accepted stdout")
	}
}

// The interval reports add up to what was added, and follow each other.
func TestInterval(t *testing.T) {
	var got []Stats
	iv := StartInterval(time.Millisecond, func(s Stats) { got = append(got, s) })
	for i := 0; i < 2000; i++ {
		iv.Add(1, uint64(i))
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	iv.Stop()
	iv.Stop()
	var n, b uint64
	var prev time.Duration
	for _, s := range got {
		n, b = n+s.Events, b+s.Bytes
		if s.Start != prev || s.End < s.Start {
			t.Errorf("interval %v..%v after %v", s.Start, s.End, prev)
		}
		prev = s.End
	}
	if n != 2000 || b != 1999*2000/2 || len(got) < 2 {
		t.Errorf("%d intervals sum to %d events, %d bytes", len(got), n, b)
	}
}
