package mmiotrace

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// convertReference is ConvertLog's oracle: the Reader loop of
// 'iotap mmio read' before ConvertLog (ReadInto, format, write).
func convertReference(data []byte, format AppendFunc, keepGoing bool) ([]byte, ConvertStats, error) {
	rd := NewReader(bytes.NewReader(data))
	rd.SetKeepGoing(keepGoing)
	defer rd.Close()
	var out []byte
	var rec Record
	var st ConvertStats
	var err error
	for {
		e := rd.ReadInto(&rec)
		if e == io.EOF {
			break
		}
		if e != nil {
			err = e
			break
		}
		if out, e = format(out, &rec); e != nil {
			err = &ConvertError{Line: rd.Line(), Err: e}
			break
		}
		st.Records++
	}
	st.Lines, st.Skipped, st.FirstSkip, st.Lost, st.Truncated = rd.Line(), rd.Skipped(), rd.FirstSkipError(), rd.Lost(), rd.Truncated()
	return out, st, err
}

// appendDebug formats every field a parse sets for the record's kind (a
// parse leaves the fields of other kinds alone, as formatters ignore
// them), so that a record parsed differently shows.
func appendDebug(dst []byte, r *Record) ([]byte, error) {
	dst = fmt.Appendf(dst, "%v %q", r.Kind, r.Line)
	switch r.Kind {
	case KindRead, KindWrite:
		dst = fmt.Appendf(dst, " %d %x %x %x %d %v", r.Width, r.Phys, r.Value, r.PC, r.MapID, r.Time)
	case KindMap:
		dst = fmt.Appendf(dst, " %x %x %x %x %d %v", r.Phys, r.Virt, r.Len, r.PC, r.MapID, r.Time)
	case KindUnmap:
		dst = fmt.Appendf(dst, " %x %d %v", r.PC, r.MapID, r.Time)
	case KindUnknown:
		dst = fmt.Appendf(dst, " %x %x %x %d %v", r.Phys, r.PC, r.Opcode, r.MapID, r.Time)
	case KindMark:
		dst = fmt.Appendf(dst, " %v %q", r.Time, r.Text)
	case KindPCIDev:
		dst = fmt.Appendf(dst, " %+v", r.PCI)
	default:
		dst = fmt.Appendf(dst, " %q", r.Text)
	}
	return append(dst, '\n'), nil
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func checkConvert(t *testing.T, name string, data []byte) {
	t.Helper()
	formats := map[string]AppendFunc{"text": AppendText, "debug": appendDebug}
	for fname, format := range formats {
		for _, keepGoing := range []bool{false, true} {
			want, wst, werr := convertReference(data, format, keepGoing)
			for _, workers := range []int{1, 2, 3} {
				for _, chunk := range []int{17, 300, 4096, 1 << 20} {
					if chunk < 4096 && len(data) > 64<<10 && (testing.Short() || chunk < 300) {
						continue
					}
					for _, mapped := range []bool{false, true} {
						var got bytes.Buffer
						opt := ConvertOptions{Workers: workers, ChunkSize: chunk, KeepGoing: keepGoing}
						if mapped {
							opt.mapped = append(make([]byte, 0, len(data)), data...)
						}
						st, err := ConvertLog(context.Background(), bytes.NewReader(data), &got, format, opt)
						tag := fmt.Sprintf("%s %s keepGoing=%v workers=%d chunk=%d mapped=%v", name, fname, keepGoing, workers, chunk, mapped)
						if errString(err) != errString(werr) {
							t.Fatalf("%s: error %v, want %v", tag, err, werr)
						}
						if werr == nil && !bytes.Equal(got.Bytes(), want) {
							t.Fatalf("%s: output differs (%d bytes, want %d)", tag, got.Len(), len(want))
						}
						if werr != nil && !bytes.HasPrefix(want, got.Bytes()) && !bytes.HasPrefix(got.Bytes(), want) {
							t.Fatalf("%s: output before the error differs", tag)
						}
						if werr == nil && (st.Lines != wst.Lines || st.Records != wst.Records) ||
							st.Skipped != wst.Skipped || st.Lost != wst.Lost || st.Truncated != wst.Truncated ||
							errString(st.FirstSkip) != errString(wst.FirstSkip) {
							t.Fatalf("%s: stats %+v, want %+v", tag, st, wst)
						}
					}
				}
			}
		}
	}
}

// TestConvertLogMatchesReader: the parallel converter gives the Reader
// loop's output, stats and errors, for every chunk size and worker count.
func TestConvertLogMatchesReader(t *testing.T) {
	bind, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	checkConvert(t, "e1000-bind.log", bind)
	checkConvert(t, "sample", []byte(sample))
	checkConvert(t, "cut", bind[:len(bind)-7])
	checkConvert(t, "cut-rw", []byte("VERSION 20070824\nR 4 1.000001 1 0xfebc0008 0x80 0x0 0\nW 4 1.0000"))
	checkConvert(t, "empty", nil)
	checkConvert(t, "no-newline", []byte("VERSION 20070824"))
	checkConvert(t, "blank", []byte("\n\n\n"))
	lost := strings.Replace(sample, "\n", "\nLost 12 events.\n", 3)
	checkConvert(t, "lost", []byte(lost))

	// Bad lines here and there, with and without keep-going.
	rng := rand.New(rand.NewSource(1))
	lines := bytes.SplitAfter(bind, []byte("\n"))
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	for round := 0; round < rounds; round++ {
		var b []byte
		for i, l := range lines {
			if rng.Intn(40) == 0 {
				switch rng.Intn(4) {
				case 0:
					b = append(b, "R 4 x.y 1 0x1 0x2 0x3 0\n"...)
				case 1:
					b = append(b, "MAP 1.0 nope\n"...)
				case 2:
					l = bytes.Replace(l, []byte("0x"), []byte("0q"), 1)
				case 3:
					b = append(b, "W 4 1.000001 1 0xfebc0008 0x80 0x0 0 trailing\n"...)
				}
			}
			_ = i
			b = append(b, l...)
		}
		checkConvert(t, fmt.Sprintf("bad-%d", round), b)
	}

	// A line longer than the Reader's limit.
	long := append([]byte("VERSION 20070824\nMARK 1.0 "), bytes.Repeat([]byte("x"), DefaultMaxLine+10)...)
	long = append(long, "\nR 4 1.000001 1 0xfebc0008 0x80 0x0 0\n"...)
	for _, w := range []int{1, 2} {
		var got bytes.Buffer
		_, err := ConvertLog(context.Background(), bytes.NewReader(long), &got, AppendText, ConvertOptions{Workers: w, ChunkSize: 4096})
		_, _, werr := convertReference(long, AppendText, true)
		if errString(err) != errString(werr) || werr == nil {
			t.Fatalf("workers %d: long line: error %v, want %v", w, err, werr)
		}
	}
}

// TestConvertLogCompressed: compressed input is read as Reader reads it.
func TestConvertLogCompressed(t *testing.T) {
	raw, err := os.ReadFile("testdata/e1000-trace-file.log.xz")
	if err != nil {
		t.Fatal(err)
	}
	want, _, werr := convertReference(raw, AppendText, false)
	var got bytes.Buffer
	_, err = ConvertLog(context.Background(), bytes.NewReader(raw), &got, AppendText, ConvertOptions{Workers: 2, ChunkSize: 4096})
	if errString(err) != errString(werr) || !bytes.Equal(got.Bytes(), want) || len(want) == 0 {
		t.Fatalf("error %v (want %v), %d bytes (want %d)", err, werr, got.Len(), len(want))
	}
}

// FuzzConvertLog: for any input, the parallel converter agrees with the
// Reader loop.
func FuzzConvertLog(f *testing.F) {
	f.Add([]byte(sample), uint16(64), true)
	f.Add([]byte("VERSION 20070824\nR 4 1.0 1 0x1 0x2 0x3 0"), uint16(8), false)
	f.Add([]byte("R 4 x.y 1 0x1 0x2 0x3 0\nMARK 1.0 Lost 3 events.\n"), uint16(5), true)
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, keepGoing bool) {
		want, wst, werr := convertReference(data, appendDebug, keepGoing)
		for _, mapped := range []bool{false, true} {
			opt := ConvertOptions{Workers: 2, ChunkSize: int(chunk%4096) + 1, KeepGoing: keepGoing}
			if mapped {
				opt.mapped = append(make([]byte, 0, len(data)), data...)
			}
			var got bytes.Buffer
			st, err := ConvertLog(context.Background(), bytes.NewReader(data), &got, appendDebug, opt)
			if errString(err) != errString(werr) {
				t.Fatalf("mapped %v: error %v, want %v", mapped, err, werr)
			}
			if werr != nil {
				continue
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("mapped %v: output %q, want %q", mapped, got.Bytes(), want)
			}
			if st.Lines != wst.Lines || st.Records != wst.Records || st.Skipped != wst.Skipped || st.Lost != wst.Lost || st.Truncated != wst.Truncated || errString(st.FirstSkip) != errString(wst.FirstSkip) {
				t.Fatalf("mapped %v: stats %+v, want %+v", mapped, st, wst)
			}
		}
	})
}

// TestConvertLogFile: a log given as ConvertOptions.File is mapped and
// converted in place, whatever was read of the file before, with the
// pages done with dropped on the way (a log of 6 MiB: more than
// dropEvery): the output, statistics and errors are the Reader loop's,
// with one and two workers, text and NDJSON. A compressed file is read
// through in as before.
func TestConvertLogFile(t *testing.T) {
	bind, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for len(data) < 6<<20 {
		data = append(data, bind...)
	}
	data = append(data, "R 4 1.000001 1 0xfebc0008 0x80 0x0 0\nW 4 1.0000"...) // cut
	path := filepath.Join(t.TempDir(), "big.log")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	formats := map[string]AppendFunc{"text": AppendText, "ndjson": (&NDJSONEncoder{}).Append}
	for fname, format := range formats {
		want, wst, werr := convertReference(data, format, false)
		for _, workers := range []int{0, 1, 2} {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			head := make([]byte, 100)
			if _, err := io.ReadFull(f, head); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			st, err := ConvertLog(context.Background(), io.MultiReader(bytes.NewReader(head), f), &got, format,
				ConvertOptions{Workers: workers, ChunkSize: 64 << 10, File: f, AccessNDJSON: fname == "ndjson"})
			f.Close()
			if errString(err) != errString(werr) || !bytes.Equal(got.Bytes(), want) || st.Lines != wst.Lines || st.Records != wst.Records || st.Truncated != wst.Truncated || !st.Truncated {
				t.Fatalf("%s workers %d: error %v (want %v), %d bytes (want %d), stats %+v (want %+v)", fname, workers, err, werr, got.Len(), len(want), st, wst)
			}
		}
	}
	// A compressed file (stored, 6 MiB) is not mapped: it is read through in.
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.NoCompression)
	zw.Write(data)
	zw.Close()
	gzPath := filepath.Join(t.TempDir(), "big.log.gz")
	if err := os.WriteFile(gzPath, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	want, _, werr := convertReference(data, AppendText, false)
	f, err := os.Open(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got bytes.Buffer
	_, err = ConvertLog(context.Background(), f, &got, AppendText, ConvertOptions{File: f})
	if errString(err) != errString(werr) || !bytes.Equal(got.Bytes(), want) || len(want) == 0 {
		t.Fatalf("compressed: error %v (want %v), %d bytes (want %d)", err, werr, got.Len(), len(want))
	}
}
