package usbmon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// refTextReader is the text reader as it was before it had its own
// buffer and the fast parser (bufio.Reader.ReadSlice, then parseTextLine
// on every line): the reference the reader is checked against.
type refTextReader struct {
	br      *bufio.Reader
	f       Format
	line    int
	off     int64
	keep    bool
	skipped int
}

func (r *refTextReader) ReadInto(ev *Event) error {
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.line++
			ferr := &FormatError{Format: r.f, Line: r.line, Offset: r.off, Msg: "line longer than 64 KiB", Err: ErrFormat}
			for err == bufio.ErrBufferFull {
				r.off += int64(len(line))
				line, err = r.br.ReadSlice('\n')
			}
			r.off += int64(len(line))
			if !r.keep {
				return ferr
			}
			r.skipped++
			continue
		}
		if len(line) == 0 && err != nil {
			return err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		r.line++
		start := r.off
		r.off += int64(len(line))
		body := trimEOL(line)
		if len(body) == 0 && err == nil {
			ferr := &FormatError{Format: r.f, Line: r.line, Offset: start, Msg: "empty line", Err: ErrFormat}
			if !r.keep {
				return ferr
			}
			r.skipped++
			continue
		}
		if len(body) == 0 {
			return io.EOF
		}
		*ev = Event{Data: make([]byte, 0, maxTextData), ISO: make([]ISODesc, 0, 5)}
		if msg := parseTextLine(body, r.f, ev); msg != "" {
			ferr := &FormatError{Format: r.f, Line: r.line, Offset: start, Msg: msg, Err: ErrFormat}
			if err != nil {
				ferr.Err = ErrTruncated
			}
			if !r.keep {
				return ferr
			}
			r.skipped++
			continue
		}
		return nil
	}
}

// readerAgrees reads in with the text reader (in chunks as wrap cuts it)
// and with refTextReader and fails t on the first event, error (its text,
// line, offset and sentinel) or skip count that differs.
func readerAgrees(t testing.TB, in []byte, f Format, keep bool, wrap func(io.Reader) io.Reader) int {
	t.Helper()
	r := NewTextReader(wrap(bytes.NewReader(in)), f, ReaderOptions{KeepGoing: keep})
	ref := &refTextReader{br: bufio.NewReaderSize(bytes.NewReader(in), 1<<16), f: f, keep: keep}
	var ev, want Event
	for i := 0; ; i++ {
		err := r.ReadInto(&ev)
		werr := ref.ReadInto(&want)
		if fmt.Sprint(err) != fmt.Sprint(werr) || errors.Is(err, ErrTruncated) != errors.Is(werr, ErrTruncated) {
			t.Fatalf("%s keep=%v event %d: error %v, reference %v", f, keep, i, err, werr)
		}
		var fe, wfe *FormatError
		if errors.As(err, &fe) && errors.As(werr, &wfe) && (fe.Line != wfe.Line || fe.Offset != wfe.Offset) {
			t.Fatalf("%s keep=%v event %d: error at line %d offset %d, reference %d %d", f, keep, i, fe.Line, fe.Offset, wfe.Line, wfe.Offset)
		}
		if err != nil {
			if s := r.(Skipper).Skipped(); s != ref.skipped {
				t.Fatalf("%s: skipped %d lines, reference %d", f, s, ref.skipped)
			}
			return i
		}
		if !reflectEqualEvents(&ev, &want) {
			t.Fatalf("%s keep=%v event %d:\n got %+v\nwant %+v", f, keep, i, ev, want)
		}
	}
}

func reflectEqualEvents(a, b *Event) bool {
	x, y := *a, *b
	if !bytes.Equal(x.Data, y.Data) || len(x.ISO) != len(y.ISO) {
		return false
	}
	for i := range x.ISO {
		if x.ISO[i] != y.ISO[i] {
			return false
		}
	}
	x.Data, y.Data, x.ISO, y.ISO = nil, nil, nil, nil
	return reflect.DeepEqual(x, y)
}

var chunkings = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"bytes", iotest.OneByteReader},
	{"halves", iotest.HalfReader},
	{"error", func(r io.Reader) io.Reader { return iotest.DataErrReader(r) }},
}

// The reader agrees with the reference reader (events, errors with line
// and offset, skip counts) on good text, bad lines, blank lines, CRLF,
// a cut last line, lines longer than the buffer, in every chunking.
func TestTextReaderAgreesWithReference(t *testing.T) {
	good := strings.Join(kernelLines1u, "\n") + "\n"
	long := strings.Repeat("x", 70000)
	inputs := []string{
		good,
		good + good[:len(good)/2],
		strings.ReplaceAll(good, "\n", "\r\n"),
		kernelLines1u[0] + "\n\n" + kernelLines1u[1] + "\n",
		kernelLines1u[0] + "\n" + long + "\n" + kernelLines1u[1] + "\n",
		kernelLines1u[0] + "\n" + long,
		kernelLines1u[0] + "\n" + "d5ea89a0 1 S Ci:1:300:0 0 0\n" + kernelLines1u[1] + "\n",
		kernelLines1u[0] + "\x00\n" + kernelLines1u[1],
		strings.Repeat(good, 400),
		"",
		"\n",
	}
	for _, in := range inputs {
		for _, c := range chunkings {
			for _, keep := range []bool{false, true} {
				readerAgrees(t, []byte(in), Format1u, keep, c.wrap)
			}
		}
	}
	readerAgrees(t, []byte(strings.Join(kernelLines1t, "\n")+"\n"), Format1t, false, chunkings[1].wrap)
}

// FuzzTextReader: on any input, in any chunking, the text reader and the
// reference reader agree (events, errors, positions, skips).
func FuzzTextReader(f *testing.F) {
	f.Add([]byte(strings.Join(kernelLines1u, "\n")+"\n"), true, uint8(0))
	f.Add([]byte(kernelLines1u[0]+"\n\n"+kernelLines1u[1]), false, uint8(1))
	f.Add([]byte(strings.Join(kernelLines1u[:4], "\r\n")), true, uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, keep bool, chunking uint8) {
		readerAgrees(t, in, Format1u, keep, chunkings[int(chunking)%len(chunkings)].wrap)
	})
}
