package mmiotrace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badLines holds one malformed line per record kind that can be malformed
// (VERSION and LSPCI take any text), with the field the parser names.
var badLines = []struct {
	name, line string
	kind       Kind
	field      string
}{
	{"R timestamp", "R 4 1.0000x2 1 0xzz 0x1 0x0 0", KindRead, "timestamp"},
	{"R width", "R 3 1.000002 1 0xfebc0000 0x1 0x0 0", KindRead, "width"},
	{"R phys", "R 4 1.000002 1 0xzz 0x1 0x0 0", KindRead, "physical address"},
	{"R trailing", "R 4 1.000002 1 0xfebc0000 0x1 0x0 0 x", KindRead, "pid"},
	{"W value", "W 4 1.000002 1 0xfebc0000 0xq 0x0 0", KindWrite, "value"},
	{"W map id", "W 4 1.000002 z 0xfebc0000 0x1 0x0 0", KindWrite, "map id"},
	{"W pc", "W 8 1.000002 1 0xfebc0000 0x1 pc 0", KindWrite, "pc"},
	{"W short", "W 4", KindWrite, "width"},
	{"MAP length", "MAP 1.000000 3 0xfe000000 0xffffc90000300000 len 0x0 0", KindMap, "length"},
	{"UNMAP pid", "UNMAP 2.000000 1 0x0 x", KindUnmap, "pid"},
	{"MARK timestamp", "MARK 1.x hello", KindMark, "timestamp"},
	{"UNKNOWN opcode", "UNKNOWN 1.000003 1 0xfebc0000 0f,1f 0xffffffff8160a1d0 0", KindUnknown, "opcode bytes"},
	{"PCIDEV ids", "PCIDEV 0030 8086 0", KindPCIDev, "vendor/device id"},
}

// filterModes runs FilterLog the three ways it can work: sequential
// (Reader), parallel over a stream, parallel over a mapped file.
var filterModes = []struct {
	name string
	run  func(t *testing.T, log string, f *Filter, keepGoing bool) (string, FilterStats, error)
}{
	{"sequential", func(t *testing.T, log string, f *Filter, kg bool) (string, FilterStats, error) {
		var out bytes.Buffer
		st, err := FilterLog(context.Background(), strings.NewReader(log), &out, f, FilterOptions{Workers: 1, KeepGoing: kg})
		return out.String(), st, err
	}},
	{"parallel", func(t *testing.T, log string, f *Filter, kg bool) (string, FilterStats, error) {
		var out bytes.Buffer
		st, err := FilterLog(context.Background(), strings.NewReader(log), &out, f, FilterOptions{Workers: 3, ChunkSize: 4096, KeepGoing: kg})
		return out.String(), st, err
	}},
	{"mapped", func(t *testing.T, log string, f *Filter, kg bool) (string, FilterStats, error) {
		p := filepath.Join(t.TempDir(), "x.log")
		if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		var out bytes.Buffer
		st, err := FilterLog(context.Background(), fh, &out, f, FilterOptions{Workers: 3, ChunkSize: 64 << 10, KeepGoing: kg})
		return out.String(), st, err
	}},
}

// TestFilterBadLines: a bad line of every kind is an error with its line
// number in every mode, whatever the criteria would do with the line, also
// when the line is the first or last of a chunk; with keep-going it is
// skipped, counted, and the output equals the filter of the log without it.
func TestFilterBadLines(t *testing.T) {
	var kw KindSet
	kw.Add(KindWrite)
	var kr KindSet
	kr.Add(KindRead)
	filters := map[string]*Filter{
		"none":       {},
		"writes":     {Kinds: kw},
		"reads":      {Kinds: kr},
		"other addr": {Ranges: []AddrRange{{0x1000, 0x2000}}},
		"awk-like":   {Kinds: kw, Widths: 1 << 4, Ranges: []AddrRange{{0xfebc0100, 0xfebc0200}}},
	}
	if testing.Short() {
		delete(filters, "reads")
		delete(filters, "other addr")
	}
	base := strings.Split(strings.TrimSuffix(genLog(40000, 11), "\n"), "\n")
	if n := len(strings.Join(base, "\n")); n < 1<<20 {
		t.Fatalf("log of %d bytes too small to be mapped", n)
	}
	// Positions: early, and the lines just before and after a 4096-byte
	// and a 64 KiB boundary (the chunk sizes of the parallel modes).
	var positions []int
	off := 0
	for i, l := range base {
		if off < 4096 && off+len(l)+1 >= 4096 || off < 65536 && off+len(l)+1 >= 65536 {
			positions = append(positions, i, i+1)
		}
		off += len(l) + 1
	}
	positions = append(positions, 7, len(base))
	good := strings.Join(base, "\n") + "\n"
	want := map[string]string{}
	for fname, f := range filters {
		want[fname] = naiveFilter(t, good, f)
	}
	for _, bl := range badLines {
		for _, pos := range positions {
			lines := append(append(append([]string{}, base[:pos]...), bl.line), base[pos:]...)
			log := strings.Join(lines, "\n") + "\n"
			for fname, f := range filters {
				for _, m := range filterModes {
					_, _, err := m.run(t, log, f, false)
					var pe *ParseError
					if !errors.As(err, &pe) || pe.Line != int64(pos+1) || pe.Kind != bl.kind || pe.Field != bl.field {
						t.Fatalf("%s at line %d, filter %s, %s: err %v; want line %d, %s, %s", bl.name, pos+1, fname, m.name, err, pos+1, bl.kind, bl.field)
					}
					if !errors.Is(err, ErrFormat) {
						t.Fatalf("%v does not wrap ErrFormat", err)
					}
					out, st, err := m.run(t, log, f, true)
					if err != nil {
						t.Fatalf("%s keep-going %s: %v", bl.name, m.name, err)
					}
					if st.Skipped != 1 || !errors.As(st.FirstSkip, &pe) || pe.Line != int64(pos+1) || st.Lines != int64(len(lines)) {
						t.Fatalf("%s at line %d keep-going, filter %s, %s: stats %+v", bl.name, pos+1, fname, m.name, st)
					}
					if out != want[fname] {
						t.Fatalf("%s keep-going, filter %s, %s: output differs from the filter of the log without the bad line", bl.name, fname, m.name)
					}
				}
			}
		}
	}
}

// TestFilterBadLineDroppedKind is the case from the issue: a write filter
// over a log whose bad line is a read.
func TestFilterBadLineDroppedKind(t *testing.T) {
	log := "VERSION 20070824\nW 4 1.000001 1 0xfebc0000 0x1 0x0 0\nR 4 1.0000x2 1 0xzz 0x1 0x0 0\n"
	var kw KindSet
	kw.Add(KindWrite)
	for _, m := range filterModes {
		_, _, err := m.run(t, log, &Filter{Kinds: kw}, false)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 {
			t.Errorf("%s: err %v, want a ParseError at line 3", m.name, err)
		}
	}
}

// filterAll runs FilterLog without criteria in the given mode.
func filterAll(data []byte, workers, chunk int, keepGoing bool) (string, FilterStats, error) {
	var out bytes.Buffer
	st, err := FilterLog(context.Background(), bytes.NewReader(data), &out, &Filter{}, FilterOptions{Workers: workers, ChunkSize: chunk, KeepGoing: keepGoing})
	return out.String(), st, err
}

// FuzzFilterMatchesReader: a filter with no criteria, sequential and
// parallel, gives what the Reader gives: the same lines, the same first
// error (line number included), the same skip and lost counts.
func FuzzFilterMatchesReader(f *testing.F) {
	f.Add([]byte(sample), false)
	f.Add([]byte("VERSION 20070824\nW 4 1.000001 1 0xfebc0000 0x1 0x0 0\nR 4 1.0000x2 1 0xzz 0x1 0x0 0\n"), false)
	f.Add([]byte(genLog(300, 5)), true)
	f.Add([]byte("MARK 0.000000 Lost 3 events.\nR 4 1.0 1 0x1 0x2 0x3 0"), true)
	f.Fuzz(func(t *testing.T, data []byte, keepGoing bool) {
		if DetectCompression(data) != None {
			return
		}
		var want strings.Builder
		rd := NewReader(bytes.NewReader(data))
		rd.SetKeepGoing(keepGoing)
		var rec Record
		var rerr error
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				rerr = err
				break
			}
			want.Write(rec.Line)
			want.WriteByte('\n')
		}
		for _, w := range []struct{ workers, chunk int }{{1, 0}, {2, 64}, {3, 7}} {
			out, st, err := filterAll(data, w.workers, w.chunk, keepGoing)
			if (err == nil) != (rerr == nil) || err != nil && err.Error() != rerr.Error() {
				t.Fatalf("workers %d chunk %d: filter error %v, reader error %v", w.workers, w.chunk, err, rerr)
			}
			if err != nil {
				continue
			}
			if out != want.String() {
				t.Fatalf("workers %d chunk %d: filter output %q, reader %q", w.workers, w.chunk, out, want.String())
			}
			if st.Skipped != rd.Skipped() || st.Lost != rd.Lost() || st.Lines != rd.Line() || st.Truncated != rd.Truncated() {
				t.Fatalf("workers %d chunk %d: stats %+v; reader lines %d skipped %d lost %d truncated %v", w.workers, w.chunk, st, rd.Line(), rd.Skipped(), rd.Lost(), rd.Truncated())
			}
			if fe, re := st.FirstSkip, rd.FirstSkipError(); (fe == nil) != (re == nil) || fe != nil && fe.Error() != re.Error() {
				t.Fatalf("workers %d chunk %d: first skip %v, reader %v", w.workers, w.chunk, fe, re)
			}
		}
	})
}
