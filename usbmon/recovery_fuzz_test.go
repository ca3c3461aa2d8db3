package usbmon

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// readTextAll reads a whole text capture with opt and returns its events
// (cloned) and the error that ended it (nil for io.EOF).
func readTextAll(in []byte, f Format, opt ReaderOptions) ([]*Event, error) {
	r := NewTextReader(bytes.NewReader(in), f, opt)
	var evs []*Event
	var ev Event
	for {
		err := r.ReadInto(&ev)
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev.Clone())
	}
}

// FuzzTextRecovery: garbage lines spliced between the lines of a valid
// kernel capture are skipped and counted (--keep-going), each skip an
// error whose offset is inside the garbage; the events before and after
// the garbage read back exactly as from the clean capture; nothing else
// ends the read. The oracle is the clean capture itself, read strictly.
func FuzzTextRecovery(f *testing.F) {
	f.Add([]byte("not a usbmon line\n"), uint8(3), false)
	f.Add([]byte("\x00\xff\xfe binary\n\n\r\n"), uint8(0), true)
	f.Add([]byte(strings.Repeat("x", 70000)+"\n"), uint8(5), false) // longer than the reader's buffer
	f.Add([]byte(kernelLines1u[2][:40]+"\n"), uint8(9), false)      // a line cut by a crash
	f.Add([]byte(kernelLines1u[7]+" trailing junk\n"), uint8(16), false)
	f.Add([]byte("ffff8880041b0000 12 S Ii:1:002:1 -115:8 8 <\n"), uint8(1), true) // a valid line: an event, not a skip
	f.Fuzz(func(t *testing.T, garbage []byte, at uint8, oneT bool) {
		lines, format := kernelLines1u, Format1u
		if oneT {
			lines, format = kernelLines1t, Format1t
		}
		if len(garbage) == 0 || garbage[len(garbage)-1] != '\n' {
			garbage = append(garbage, '\n') // whole lines of garbage
		}
		k := int(at) % (len(lines) + 1)
		var pre, post []byte
		for _, l := range lines[:k] {
			pre = append(append(pre, l...), '\n')
		}
		for _, l := range lines[k:] {
			post = append(append(post, l...), '\n')
		}
		wantPre, err := readTextAll(pre, format, ReaderOptions{})
		if err != nil || len(wantPre) != k {
			t.Fatalf("clean prefix: %d events, %v", len(wantPre), err)
		}
		wantPost, err := readTextAll(post, format, ReaderOptions{})
		if err != nil || len(wantPost) != len(lines)-k {
			t.Fatalf("clean suffix: %d events, %v", len(wantPost), err)
		}
		in := append(append(append([]byte{}, pre...), garbage...), post...)
		gStart, gEnd := int64(len(pre)), int64(len(pre)+len(garbage))
		skips := 0
		got, err := readTextAll(in, format, ReaderOptions{KeepGoing: true, OnSkip: func(err error) {
			skips++
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < gStart || fe.Offset >= gEnd {
				t.Fatalf("skip %v: not a FormatError inside the garbage [%d, %d)", err, gStart, gEnd)
			}
		}})
		if err != nil {
			t.Fatalf("read ended by %v", err)
		}
		if len(got) < len(wantPre)+len(wantPost) {
			t.Fatalf("%d events, fewer than the %d of the clean capture", len(got), len(wantPre)+len(wantPost))
		}
		if !sameEvents(got[:k], wantPre) {
			t.Fatalf("events before the garbage differ")
		}
		if !sameEvents(got[len(got)-len(wantPost):], wantPost) {
			t.Fatalf("events after the garbage differ")
		}
		// Every garbage line is an event, a counted skip, or blank.
		if extra := len(got) - len(wantPre) - len(wantPost); extra+skips > bytes.Count(garbage, []byte("\n")) {
			t.Fatalf("%d events + %d skips from %d garbage lines", extra, skips, bytes.Count(garbage, []byte("\n")))
		}
	})
}

func sameEvents(a, b []*Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
