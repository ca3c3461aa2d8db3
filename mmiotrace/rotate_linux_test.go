package mmiotrace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/iotap/iotap/rotate"
)

// The lab's e1000 log copied (one byte per read, as from trace_pipe)
// into zstd-compressed files of 16 KiB of log: each file parses on its own
// with its PCIDEV line, the records of the files in order are the log's,
// each once, and the interval counts add up to the log's records.
func TestRotatingLogCopy(t *testing.T) {
	in, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := NewRotatingLog(rotate.Options{Path: filepath.Join(dir, "e.log.zst"), Size: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var events, byts uint64
	iv := rotate.StartInterval(time.Millisecond, func(s rotate.Stats) { events += s.Events; byts += s.Bytes })
	st := copyLog(w, iotest.HalfReader(bytes.NewReader(in)), iv)
	iv.Stop()
	if err := w.Close(); err != nil || st.err != nil {
		t.Fatal(err, st.err)
	}
	var header, records []string
	for _, l := range strings.SplitAfter(string(in), "\n") {
		if IsHeaderLine([]byte(strings.TrimSuffix(l, "\n"))) {
			header = append(header, l)
		} else if l != "" {
			records = append(records, l)
		}
	}
	recBytes := 0
	for _, r := range records {
		recBytes += len(r)
	}
	if events != uint64(len(records)) || byts != uint64(recBytes) {
		t.Errorf("intervals: %d records, %d bytes; the log has %d, %d", events, byts, len(records), recBytes)
	}
	names := w.Files().Names()
	if len(names) < 5 {
		t.Fatalf("%d files", len(names))
	}
	var got []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".log.zst") {
			t.Errorf("file name %s", n)
		}
		f, err := os.Open(n)
		if err != nil {
			t.Fatal(err)
		}
		r, _, done, err := Decompress(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		done()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		if strings.Join(lines[:len(header)], "") != strings.Join(header, "") {
			t.Fatalf("%s does not start with the log's header", n)
		}
		counts, err := CountKinds(NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if counts[KindMap] == 0 && counts[KindRead] == 0 && counts[KindWrite] == 0 {
			t.Errorf("%s: no records: %v", n, counts)
		}
		for _, l := range lines[len(header):] {
			if l != "" {
				got = append(got, l)
			}
		}
	}
	if strings.Join(got, "") != strings.Join(records, "") {
		t.Errorf("the files' records (%d) differ from the log's (%d)", len(got), len(records))
	}
}
