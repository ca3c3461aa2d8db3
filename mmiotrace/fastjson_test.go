package mmiotrace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"testing"
)

// accessEdgeLines are R/W lines at the edges of what appendAccessLines
// takes: leading zeros, seconds 0, a PC of 0, every hex length, upper
// case, widths and field lengths it must refuse.
var accessEdgeLines = []string{
	"R 4 1.000001 1 0xfebc0008 0x80 0x0 0\n",
	"W 1 0.000001 1 0x1 0x2 0x3 0\n",
	"W 1 0.000000 1 0x1 0x2 0x3 0\n",
	"R 8 0001.000001 01 0x0febc 0x00 0x0 0\n",
	"R 2 10.000001 0 0x0 0x0 0x00 0\n",
	"R 2 1234567.999999 1234567 0xffffffffffffffff 0x123456789 0xffffffff81234567 1234567\n",
	"R 2 12345678.999999 1 0x1 0x1 0x1 1\n",
	"R 4 5.123456 12345678 0x1 0x1 0x1 1\n",
	"W 4 5.123456 3 0x123456789abcdef 0x12345678abcde 0x1234567890 12\n",
	"W 4 5.123456 3 0xabcdef012 0xabcdef0123 0xabcdef01234 12345678\n",
	"W 4 5.123456 3 0x1ffffffffffffffff 0x1 0x1 1\n",
	"R 4 9.999999 1 0xFEBC0008 0x80 0xffffffff81000000 7\n",
	"R 3 1.000001 1 0xfebc0008 0x80 0x0 0\n",
	"R 0 1.000001 1 0xfebc0008 0x80 0x0 0\n",
	"R 16 1.000001 1 0xfebc0008 0x80 0x0 0\n",
	"R 4 1.00001 1 0xfebc0008 0x80 0x0 0\n",
	"R 4 1.0000011 1 0xfebc0008 0x80 0x0 0\n",
	"R 4 1.000001 -1 0xfebc0008 0x80 0x0 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0x0 -1\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0x0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0x0 0 \n",
	"R 4 1.000001 1 0xfebc0008  0x80 0x0 0\n",
	"R 4 1.000001 1 0x 0x80 0x0 0\n",
	"R 4 1.000001 1 febc0008 0x80 0x0 0\n",
	"r 4 1.000001 1 0xfebc0008 0x80 0x0 0\n",
	"R\t4 1.000001 1 0xfebc0008 0x80 0x0 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0xg 0\n",
	"W 4 77.000001 1 0xfebc0008 0x80 0xffffffff8190d2ac 123\r\n",
	// Each hex field at the edges of its word-at-a-time checks: 8 digits
	// then a letter or a digit, 9 and 16 digits (the PC's usual form,
	// with a leading zero, a bad last digit, 17 digits), an empty field.
	"R 4 1.000001 1 0xfebc0008g 0x80 0xffffffff8190d2ac 0\n",
	"R 4 1.000001 1 0xfebc00081 0x80 0xffffffff8190d2ac 0\n",
	"R 4 1.000001 1 0xfebc0008 0x12345678a 0xffffffff8190d2ac 0\n",
	"R 8 1.000001 1 0xfebc0008 0xffffffffffffffff 0xffffffff8190d2ac 0\n",
	"R 8 1.000001 1 0xffffffffffffffff 0x1 0x1 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0x0fffffff8190d2ac 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0xffffffff8190d2aG 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0xffffffff8190d2ac0 0\n",
	"R 4 1.000001 1 0xfebc0008 0x 0xffffffff8190d2ac 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0x 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0x1 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0xffffffff8190d2ac 12345678\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0xffffffff8190d2ac\t0\n",
	// The one-test shapes' neighbours: an 8-digit address with a leading
	// zero, a PC of "0" without the space, PIDs and map ids of 1 and 2
	// digits.
	"R 4 1.000001 1 0x0febc008 0x80 0x0 0\n",
	"R 4 1.000001 1 0xfebc0008 0x80 0x0\n",
	"R 4 1.000001 0 0xfebc0008 0x80 0x0 01\n",
	"R 4 1.000001 10 0xfebc0008 0x80 0x0 10\n",
	"R 4 1.000001 1  0xfebc0008 0x80 0x0 1\n",
}

// realLogs returns the bundled logs of real kernels (the e1000 probe in
// the lab, the trace_pipe file log) and kinds.log.
func realLogs(t testing.TB) map[string][]byte {
	logs := map[string][]byte{}
	for _, name := range []string{"testdata/e1000-bind.log", "testdata/kinds.log"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		logs[name] = b
	}
	raw, err := os.ReadFile("testdata/e1000-trace-file.log.xz")
	if err != nil {
		t.Fatal(err)
	}
	src, _, closeDec, err := Decompress(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(src)
	closeDec()
	if err != nil {
		t.Fatal(err)
	}
	logs["testdata/e1000-trace-file.log"] = b
	return logs
}

// checkAccessLine compares appendAccessLines on the line at the start of
// data (followed by at least rwFastLen bytes) with the record path: the
// line must parse with parseRWFast to the same end, and the encoder's
// record must be the bytes written. It reports whether the line was
// taken.
func checkAccessLine(t testing.TB, data []byte) bool {
	t.Helper()
	n, k, out := appendAccessLines(data, []byte("prefix"))
	if k == 0 {
		if n != 0 || string(out) != "prefix" {
			t.Fatalf("%q: nothing taken, but %d bytes consumed, output %q", data, n, out)
		}
		return false
	}
	var rec Record
	end, ok := parseRWFast(data, &rec, true)
	if !ok {
		t.Fatalf("%q: taken (%d bytes), parseRWFast refuses it", data[:n], n)
	}
	var enc NDJSONEncoder
	want, err := enc.Append([]byte("prefix"), &rec)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := appendAccessLines(data[:end+rwFastLen], nil)
	if first != end+1 {
		t.Fatalf("%q: first line taken as %d bytes, parseRWFast ends it at %d", data[:end+1], first, end)
	}
	if k == 1 && !bytes.Equal(out, want) {
		t.Fatalf("%q:\n got %s\nwant %s", data[:end+1], out, want)
	}
	if k > 1 && !bytes.HasPrefix(out, want) {
		t.Fatalf("%q: first record\n got %s\nwant %s", data[:end+1], out[:min(len(out), len(want))], want)
	}
	return true
}

// checkAccessConvert runs ConvertLog with AccessNDJSON against the Reader
// loop with the encoder (convertReference): the same output, statistics
// and errors, on one and two goroutines and several chunk sizes.
func checkAccessConvert(t testing.TB, name string, data []byte, chunks []int) {
	t.Helper()
	format := (&NDJSONEncoder{}).Append
	for _, keepGoing := range []bool{false, true} {
		want, wst, werr := convertReference(data, format, keepGoing)
		for _, workers := range []int{1, 2} {
			for _, chunk := range chunks {
				for _, mapped := range []bool{false, true} {
					var got bytes.Buffer
					opt := ConvertOptions{Workers: workers, ChunkSize: chunk, KeepGoing: keepGoing, AccessNDJSON: true}
					if mapped {
						opt.mapped = append(make([]byte, 0, len(data)), data...)
					}
					st, err := ConvertLog(context.Background(), bytes.NewReader(data), &got, format, opt)
					tag := fmt.Sprintf("%s keepGoing=%v workers=%d chunk=%d mapped=%v", name, keepGoing, workers, chunk, mapped)
					if errString(err) != errString(werr) {
						t.Fatalf("%s: error %v, want %v", tag, err, werr)
					}
					if werr == nil && !bytes.Equal(got.Bytes(), want) {
						i := 0
						for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
							i++
						}
						t.Fatalf("%s: output differs at byte %d (%d bytes, want %d):\n got %.200q\nwant %.200q", tag, i, got.Len(), len(want), got.Bytes()[max(i-50, 0):], want[max(i-50, 0):])
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

// damageLog returns a copy of log with a few lines changed the ways the
// line transform must notice: a digit made a leading zero, a letter
// made upper case, a byte overwritten, a space doubled, a line cut.
func damageLog(rng *rand.Rand, log []byte) []byte {
	lines := bytes.SplitAfter(log, []byte("\n"))
	var b []byte
	for _, l := range lines {
		l = bytes.Clone(l)
		if len(l) > 4 && rng.Intn(25) == 0 {
			i := rng.Intn(len(l) - 1)
			switch rng.Intn(5) {
			case 0:
				if j := bytes.Index(l[i:], []byte(" ")); j >= 0 && i+j+1 < len(l) {
					l = append(l[:i+j+1], append([]byte("0"), l[i+j+1:]...)...)
				}
			case 1:
				if l[i] >= 'a' && l[i] <= 'f' {
					l[i] -= 'a' - 'A'
				}
			case 2:
				l[i] = byte(rng.Intn(256))
			case 3:
				if j := bytes.IndexByte(l[i:], ' '); j >= 0 {
					l = append(l[:i+j+1], l[i+j:]...)
				}
			case 4:
				l = l[:i]
			}
		}
		b = append(b, l...)
	}
	return b
}

// TestAccessLinesMatchEncoder checks 'mmio read --json”s line transform
// (appendAccessLines) against the record path (parseRWFast and
// NDJSONEncoder.Append, the path every other record takes): line by
// line on logs of real kernels and on edge cases, and through ConvertLog
// on those logs whole, cut and damaged. On the real logs it must take
// nearly every R/W line (else the test would pass by taking none).
func TestAccessLinesMatchEncoder(t *testing.T) {
	pad := bytes.Repeat([]byte("R 4 1.000001 1 0x1 0x2 0x3 0\n"), 8)
	for _, l := range accessEdgeLines {
		checkAccessLine(t, append([]byte(l), pad...))
	}
	// Of the first six, the first and the sixth have canonical numbers.
	for i, l := range accessEdgeLines[:6] {
		if took := checkAccessLine(t, append([]byte(l), pad...)); took != (i == 0 || i == 5) {
			t.Fatalf("%q: taken %v", l, took)
		}
	}
	logs := realLogs(t)
	for name, log := range logs {
		rw, took := 0, 0
		for off := 0; off < len(log); {
			end := bytes.IndexByte(log[off:], '\n')
			if end < 0 {
				break
			}
			if log[off] == 'R' || log[off] == 'W' {
				rw++
				if checkAccessLine(t, append(bytes.Clone(log[off:off+end+1]), pad...)) {
					took++
				}
			}
			off += end + 1
		}
		if rw > 100 && took < rw*9/10 {
			t.Fatalf("%s: %d of %d R/W lines taken by the line transform", name, took, rw)
		}
		t.Logf("%s: %d of %d R/W lines taken", name, took, rw)
		checkAccessConvert(t, name, log, []int{300, 4096, 1 << 20})
		checkAccessConvert(t, name+" cut", log[:len(log)*2/3], []int{4096})
	}
	edge := []byte("VERSION 20070824\n")
	for _, l := range accessEdgeLines {
		edge = append(append(edge, l...), pad...)
	}
	checkAccessConvert(t, "edge lines", edge, []int{100, 4096})
	rng := rand.New(rand.NewSource(15))
	bind := logs["testdata/e1000-bind.log"]
	for round := 0; round < 4; round++ {
		checkAccessConvert(t, fmt.Sprintf("damaged %d", round), damageLog(rng, bind), []int{4096, 1 << 20})
	}
}

// FuzzAccessLines checks the line transform against the record path on
// arbitrary input: ConvertLog's output, statistics and errors with and
// without AccessNDJSON, and the first line on its own.
func FuzzAccessLines(f *testing.F) {
	for _, l := range accessEdgeLines {
		f.Add([]byte(l+l), uint16(200), false)
	}
	f.Add([]byte("VERSION 20070824\nR 4 1.000001 1 0xfebc0008 0x80 0xffffffff81000000 0\nMARK 1.0 Lost 3 events.\n"), uint16(64), true)
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, keepGoing bool) {
		checkAccessLine(t, append(bytes.Clone(data), make([]byte, rwFastLen)...))
		format := (&NDJSONEncoder{}).Append
		want, wst, werr := convertReference(data, format, keepGoing)
		for _, workers := range []int{1, 2, -1, -2} {
			var got bytes.Buffer
			opt := ConvertOptions{Workers: workers, ChunkSize: int(chunk%4096) + 1, KeepGoing: keepGoing, AccessNDJSON: true}
			if workers < 0 { // mapped
				opt.Workers = -workers
				opt.mapped = append(make([]byte, 0, len(data)), data...)
			}
			st, err := ConvertLog(context.Background(), bytes.NewReader(data), &got, format, opt)
			if errString(err) != errString(werr) {
				t.Fatalf("workers %d: error %v, want %v", workers, err, werr)
			}
			if werr != nil {
				continue
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("workers %d: output %q, want %q", workers, got.Bytes(), want)
			}
			if st.Lines != wst.Lines || st.Records != wst.Records || st.Skipped != wst.Skipped || st.Lost != wst.Lost || st.Truncated != wst.Truncated || errString(st.FirstSkip) != errString(wst.FirstSkip) {
				t.Fatalf("workers %d: stats %+v, want %+v", workers, st, wst)
			}
		}
	})
}

// BenchmarkAccessLines measures the line transform alone on the bundled
// e1000 probe log (MB/s of log).
func BenchmarkAccessLines(b *testing.B) {
	log, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		b.Fatal(err)
	}
	out := make([]byte, 0, 3*len(log))
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		data := log
		out = out[:0]
		for len(data) > rwFastLen {
			n, _, o := appendAccessLines(data, out)
			out = o
			if n == 0 {
				i := bytes.IndexByte(data, '\n')
				n = i + 1
			}
			data = data[n:]
		}
	}
}
