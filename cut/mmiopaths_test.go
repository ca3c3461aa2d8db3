package cut

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// mmiotraceRef parses data line by line with the one reference parser,
// mmiotrace.ParseLine: the records it accepts (kind, fields, line) and
// the number of lines it rejects. A last line without its newline is
// the cut (truncated) end of the log: taken when it parses, else lost but
// not counted as bad.
func mmiotraceRef(data []byte) (recs []string, stamps map[string]int64, bad int64, truncated bool) {
	stamps = map[string]int64{}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	truncated = len(data) > 0 && data[len(data)-1] != '\n'
	for i, l := range lines {
		var r mmiotrace.Record
		if err := mmiotrace.ParseLine(l, &r); err != nil {
			if i == len(lines)-1 && truncated {
				continue
			}
			bad++
			continue
		}
		recs = append(recs, recKey(&r))
		if r.Kind == mmiotrace.KindRead || r.Kind == mmiotrace.KindWrite {
			stamps[string(l)] = int64(r.Time.NS)
		}
	}
	return recs, stamps, bad, truncated
}

func recKey(r *mmiotrace.Record) string {
	return r.Kind.String() + "|" + r.String() + "|" + string(r.Line)
}

// checkMMIOPaths feeds data to the reference parser and to every fast
// path that parses mmiotrace records (issue 11: one parser behind the
// fast paths): the Reader (whose R/W lines go through the word-at-a-time
// parser, fastrw), ConvertLog (parallel chunks), FilterLog without
// criteria (parallel, its own R/W line checker) and cut's stamp-only
// reader of R/W lines. Each must take the same records as the reference,
// skip the same lines and, for cut, give every R/W line the reference's
// stamp.
func checkMMIOPaths(t *testing.T, data []byte) {
	if mmiotrace.DetectCompression(data) != mmiotrace.None {
		return
	}
	want, stamps, bad, truncated := mmiotraceRef(data)
	join := func(s []string) string { return strings.Join(s, "\n") }

	// The Reader, keep-going.
	rd := mmiotrace.NewReader(bytes.NewReader(data))
	rd.SetKeepGoing(true)
	var got []string
	var rec mmiotrace.Record
	for rd.ReadInto(&rec) == nil {
		got = append(got, recKey(&rec))
	}
	if join(got) != join(want) || rd.Skipped() != bad || rd.Truncated() != truncated {
		t.Fatalf("Reader: %d records, %d skipped, truncated %v; reference %d, %d, %v\n%s", len(got), rd.Skipped(), rd.Truncated(), len(want), bad, truncated, firstDiff(got, want))
	}

	// ConvertLog, keep-going, two workers on small chunks.
	var conv bytes.Buffer
	format := func(dst []byte, r *mmiotrace.Record) ([]byte, error) {
		return append(append(dst, recKey(r)...), 0), nil
	}
	for _, chunk := range []int{7, 64, 1 << 20} {
		conv.Reset()
		st, err := mmiotrace.ConvertLog(context.Background(), bytes.NewReader(data), &conv, format,
			mmiotrace.ConvertOptions{Workers: 2, ChunkSize: chunk, KeepGoing: true})
		if err != nil {
			t.Fatalf("ConvertLog chunk %d: %v", chunk, err)
		}
		got = strings.Split(strings.TrimSuffix(conv.String(), "\x00"), "\x00")
		if conv.Len() == 0 {
			got = nil
		}
		if join(got) != join(want) || st.Skipped != bad || st.Truncated != truncated {
			t.Fatalf("ConvertLog chunk %d: %d records, %d skipped; reference %d, %d\n%s", chunk, len(got), st.Skipped, len(want), bad, firstDiff(got, want))
		}
	}

	// FilterLog without criteria writes the lines of the records it takes.
	var wantLines strings.Builder
	for _, k := range want {
		wantLines.WriteString(k[strings.LastIndexByte(k, '|')+1:] + "\n")
	}
	for _, w := range []struct{ workers, chunk int }{{1, 0}, {2, 64}, {3, 7}} {
		var out bytes.Buffer
		st, err := mmiotrace.FilterLog(context.Background(), bytes.NewReader(data), &out, &mmiotrace.Filter{},
			mmiotrace.FilterOptions{Workers: w.workers, ChunkSize: w.chunk, KeepGoing: true})
		if err != nil {
			t.Fatalf("FilterLog %+v: %v", w, err)
		}
		if out.String() != wantLines.String() || st.Skipped != bad || st.Truncated != truncated {
			t.Fatalf("FilterLog %+v: %d skipped (reference %d), output\n%q\nreference\n%q", w, st.Skipped, bad, out.String(), wantLines.String())
		}
	}

	// cut's stamp-only reader: an R/W line the reference takes gets the
	// reference's stamp (or is left to the reference parser).
	for line, ns := range stamps {
		if ts, ok := rwStamp([]byte(line)); ok && ts != ns {
			t.Fatalf("%q: cut's stamp %d, reference %d", line, ts, ns)
		}
	}
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("record %d: %q, reference %q", i, got[i], want[i])
		}
	}
	return ""
}

// TestMMIOPathsLab runs checkMMIOPaths on the lab logs.
func TestMMIOPathsLab(t *testing.T) {
	for _, p := range []string{mmioLog, "../mmiotrace/testdata/e1000-bind.log"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkMMIOPaths(t, data)
	}
}

// FuzzMMIOPaths: on any input, every mmiotrace fast path takes what the
// reference parser (mmiotrace.ParseLine) takes.
func FuzzMMIOPaths(f *testing.F) {
	b, err := os.ReadFile(mmioLog)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:min(len(b), 4096)])
	f.Add([]byte("VERSION 20070824\nR 4 1.000001 1 0xfebc0000 0x1 0x0 0\nW 4 1.0000x2 1 0xzz 0x1 0x0 0\nMARK 2.5 Lost 3 events.\n"))
	f.Add([]byte("R 4 12.000000001 1 0xfebc0008 0x80080783 0xffffffffc0a1b2c3 0\nR 1 0.5 2 0x1 0x2 0x3 4"))
	f.Add([]byte("W 8 99999999999.999999 65535 0xffffffffffffffff 0xffffffffffffffff 0x0 -1\nUNKNOWN 1.0 1 0x1 0x2 0x89,0x45,0x00 0\n"))
	f.Fuzz(checkMMIOPaths)
}
