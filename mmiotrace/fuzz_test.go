package mmiotrace

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"testing"
)

// FuzzParseLine: no panics; a parsed record prints as a line that parses
// back to the same record.
func FuzzParseLine(f *testing.F) {
	for _, l := range bytes.Split([]byte(sample), []byte("\n")) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		var r Record
		if err := ParseLine(line, &r); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		out := AppendRecord(nil, &r)
		var r2 Record
		if err := ParseLine(out[:len(out)-1], &r2); err != nil {
			t.Fatalf("%q printed as %q which does not parse: %v", line, out, err)
		}
		r.Line, r2.Line = nil, nil
		if r.String() != r2.String() || r.Kind != r2.Kind {
			t.Fatalf("%q -> %q -> %q", line, out, r2.String())
		}
	})
}

// FuzzReader: arbitrary input never panics; with keep-going every line is
// either a record or counted as skipped.
func FuzzReader(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("VERSION 20070824\nR 4 1.0 1 0x1 0x2 0x3 0"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data))
		rd.SetKeepGoing(true)
		defer rd.Close()
		var rec Record
		var n int64
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				return // decompression or read errors
			}
			n++
		}
		// A cut last line that does not parse is dropped (Truncated), not
		// counted as a bad line.
		if n+rd.Skipped() != rd.Line() && !(rd.Truncated() && n+rd.Skipped()+1 == rd.Line()) {
			t.Fatalf("%d records + %d skipped != %d lines", n, rd.Skipped(), rd.Line())
		}
	})
}

// TestReaderMatchesParseLine: the reader's in-buffer fast path for R/W
// lines gives the same records and errors as ParseLine on each line, on a
// log with random byte mutations.
func TestReaderMatchesParseLine(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	log := []byte(genLog(3000, 4))
	for i := 0; i < 300; i++ {
		log[rnd.Intn(len(log))] = "0123456789abcdefx -\n.RW"[rnd.Intn(23)]
	}
	lines := bytes.Split(bytes.TrimSuffix(log, []byte("\n")), []byte("\n"))
	rd := NewReader(bytes.NewReader(log))
	rd.SetKeepGoing(true)
	var want []string
	var bad int64
	for _, l := range lines {
		var r Record
		if err := ParseLine(l, &r); err != nil {
			bad++
			continue
		}
		want = append(want, r.Kind.String()+"|"+r.String()+"|"+string(r.Line))
	}
	var got []string
	var rec Record
	for rd.ReadInto(&rec) == nil {
		got = append(got, rec.Kind.String()+"|"+rec.String()+"|"+string(rec.Line))
	}
	if bad == 0 || rd.Skipped() != bad || len(got) != len(want) {
		t.Fatalf("reader: %d records, %d skipped; ParseLine: %d, %d", len(got), rd.Skipped(), len(want), bad)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: reader %q, ParseLine %q", i, got[i], want[i])
		}
	}
}
