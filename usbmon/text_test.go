package usbmon

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// Lines as the kernel prints them: the examples of the kernel's
// Documentation/usb/usbmon.rst (1t and 1u) plus the corner cases of
// mon_text.c (setup filler, ISO descriptors, interrupt interval, errors).
var kernelLines1u = []string{
	"d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <",
	"d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000",
	"dd65f0e8 4128379752 S Bo:1:005:2 -115 31 = 55534243 ad000000 00800000 80010a28 20000000 20000040 00000000 000000",
	"dd65f0e8 4128379808 C Bo:1:005:2 0 31 >",
	"ffff8880041b0000 12 S Ii:1:002:1 -115:8 8 <",
	"ffff8880041b0000 13 C Ii:1:002:1 0:8 8 = 00000400 00000000",
	"ffff8880041b0000 14 C Ii:1:002:1 -2:8 0",
	"ffff888004a1c600 2011 S Zi:2:004:3 -115:1:100 6 0:0:192 0:192:192 0:384:192 0:576:192 0:768:192 1152 <",
	"ffff888004a1c600 2045 C Zi:2:004:3 0:1:100:0 6 0:0:188 0:192:0 0:384:12 0:576:192 0:768:192 1152 = 00112233 44556677",
	"ffff888004a1c700 2046 S Zo:2:004:4 -115:1:-1 2 0:0:3 0:3:3 6 = 01020304 0506",
	"ffff888004a1c800 3000 S Ci:3:000:0 Z __ __ ____ ____ ____ 0",
	"ffff888004a1c900 3001 E Bo:3:007:2 -19 0",
	"ffff888004a1ca00 3002 C Bi:3:007:1 -71 13 D",
	"ffff888004a1cb00 3003 S Bi:3:007:1 -115 65536 <",
	"ffff888004a1cb00 3004 C Bi:3:007:1 0 65536 = 00010203 04050607 08090a0b 0c0d0e0f 10111213 14151617 18191a1b 1c1d1e1f",
	"ffff888004a1cc00 4294967295 S Co:1:127:0 s 21 09 0200 0000 0001 1 = 01",
	"ffff888004a1cd00 0 C Bi:65535:001:15 -32 0",
}

var kernelLines1t = []string{
	"d5ea89a0 3575914555 S Ci:001:00 s a3 00 0000 0003 0004 4 <",
	"d5ea89a0 3575914560 C Ci:001:00 0 4 = 01050000",
	"ffff8880041b0000 12 S Ii:002:01 -115 8 <",
	"ffff8880041b0000 13 C Ii:002:01 0 8 = 00000400 00000000",
}

func roundTripText(t *testing.T, lines []string, f Format) {
	t.Helper()
	in := strings.Join(lines, "\n") + "\n"
	r, got, err := NewReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got != f {
		t.Fatalf("detected %v, want %v", got, f)
	}
	var out bytes.Buffer
	w := NewTextWriter(&out, f)
	var ev Event
	n := 0
	for {
		err := r.ReadInto(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if n != len(lines) {
		t.Fatalf("read %d events, want %d", n, len(lines))
	}
	outLines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i := range lines {
		if outLines[i] != lines[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, outLines[i], lines[i])
		}
	}
	if l := w.Loss(); l.Total() != 0 {
		t.Errorf("text to text lost something: %v", l)
	}
}

func TestTextRoundTrip1u(t *testing.T) { roundTripText(t, kernelLines1u, Format1u) }
func TestTextRoundTrip1t(t *testing.T) { roundTripText(t, kernelLines1t, Format1t) }

func TestTextFields(t *testing.T) {
	var ev Event
	line := "ffff888004a1c600 2045 C Zi:2:004:3 0:1:100:0 6 0:0:188 0:192:0 0:384:12 0:576:192 0:768:192 1152 = 00112233 44556677"
	if msg := parseTextLine([]byte(line), Format1u, &ev); msg != "" {
		t.Fatal(msg)
	}
	if ev.ID != 0xffff888004a1c600 || ev.TextStamp != 2045 || ev.Type != Callback || ev.Transfer != Isochronous ||
		!ev.In || ev.Bus != 2 || ev.Device != 4 || ev.Endpoint != 3 || ev.Status != 0 || ev.Interval != 1 ||
		ev.StartFrame != 100 || ev.ErrorCount != 0 || ev.NumDesc != 6 || len(ev.ISO) != 5 || ev.Length != 1152 ||
		ev.DataFlag != DataPresent || !bytes.Equal(ev.Data, []byte{0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}) {
		t.Fatalf("bad decode: %+v", ev)
	}
	if ev.ISO[2] != (ISODesc{Status: 0, Offset: 384, Length: 12}) {
		t.Fatalf("ISO[2] = %+v", ev.ISO[2])
	}
	line = "d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <"
	if msg := parseTextLine([]byte(line), Format1u, &ev); msg != "" {
		t.Fatal(msg)
	}
	if ev.Setup != [8]byte{0xa3, 0, 0, 0, 3, 0, 4, 0} || ev.SetupFlag != SetupPresent || ev.DataFlag != '<' || ev.Status != -115 {
		t.Fatalf("bad setup decode: %+v", ev)
	}
}

func TestTextBadLines(t *testing.T) {
	bad := []string{
		"zz 1 S Ci:1:001:0 0 0",
		"d5ea89a0 x S Ci:1:001:0 0 0",
		"d5ea89a0 1 Q Ci:1:001:0 0 0",
		"d5ea89a0 1 S Xi:1:001:0 0 0",
		"d5ea89a0 1 S Ci:1:001 0 0",
		"d5ea89a0 1 S Ci:1:001:0 s a3 00 0000 0003 4 <",
		"d5ea89a0 1 S Ci:1:001:0 0",
		"d5ea89a0 1 S Ci:1:001:0 0 4",
		"d5ea89a0 1 C Ci:1:001:0 0 4 = 0105000",
		"d5ea89a0 1 C Ci:1:001:0 0 4 = 0g050000",
		"d5ea89a0 1 S Ii:1:002:1 -115 8 <",
		"d5ea89a0 1 S Zi:1:002:1 -115:1 0 0",
		"d5ea89a0 1 S Ci:1:001:0 0 0 extra",
		"d5ea89a0 1 S Ci:1:300:0 0 0",
	}
	for _, l := range bad {
		in := kernelLines1u[0] + "\n" + l + "\n" + kernelLines1u[1] + "\n"
		r, _, err := NewReader(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		var ev Event
		if err := r.ReadInto(&ev); err != nil {
			t.Fatal(err)
		}
		err = r.ReadInto(&ev)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Line != 2 || !errors.Is(err, ErrFormat) {
			t.Errorf("%q: got %v, want a FormatError on line 2", l, err)
		}
		// KeepGoing skips it and counts it.
		var seen []error
		r, _, _ = NewReaderOptions(strings.NewReader(in), ReaderOptions{KeepGoing: true, OnSkip: func(e error) { seen = append(seen, e) }})
		n := 0
		for r.ReadInto(&ev) == nil {
			n++
		}
		if n != 2 || r.(Skipper).Skipped() != 1 || len(seen) != 1 {
			t.Errorf("%q: keep-going read %d events, skipped %d", l, n, r.(Skipper).Skipped())
		}
	}
}

func TestTextTruncatedLastLine(t *testing.T) {
	in := kernelLines1u[0] + "\n" + "d5ea89a0 3575914560 C Ci:1:001:0 0 4"
	r, _, _ := NewReader(strings.NewReader(in))
	var ev Event
	if err := r.ReadInto(&ev); err != nil {
		t.Fatal(err)
	}
	err := r.ReadInto(&ev)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("got %v, want ErrTruncated", err)
	}
}

func TestNotUsbmon(t *testing.T) {
	for _, in := range []string{"", "hello\n", "a b c d:e\n"} {
		if _, _, err := NewReader(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestTextZeroAlloc(t *testing.T) {
	in := strings.Repeat(strings.Join(kernelLines1u, "\n")+"\n", 200)
	rd := strings.NewReader(in)
	r, _, _ := NewReader(rd)
	var ev Event
	r.ReadInto(&ev) // grow buffers
	allocs := testing.AllocsPerRun(1000, func() {
		if err := r.ReadInto(&ev); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per event, want 0", allocs)
	}
}

// A bad first line does not prevent detection; KeepGoing skips it.
func TestTextBadFirstLine(t *testing.T) {
	in := "garbage\n" + kernelLines1t[0] + "\n" + kernelLines1t[1] + "\n"
	r, f, err := NewReaderOptions(strings.NewReader(in), ReaderOptions{KeepGoing: true})
	if err != nil || f != Format1t {
		t.Fatalf("%v %v", f, err)
	}
	var ev Event
	n := 0
	for r.ReadInto(&ev) == nil {
		n++
	}
	if n != 2 || r.(Skipper).Skipped() != 1 {
		t.Fatalf("%d events, %d skipped", n, r.(Skipper).Skipped())
	}
}

// hex8 agrees with strconv on every 8-byte word built from interesting
// bytes (all hex digits, their neighbours, high bytes) in every position.
func TestHex8(t *testing.T) {
	probe := []byte("0123456789abcdefABCDEF/:@G`g \xff\x80\x00")
	base := []byte("9aF0b3c7")
	for pos := 0; pos < 8; pos++ {
		for _, c := range probe {
			w := append([]byte(nil), base...)
			w[pos] = c
			v, ok := hex8(w)
			want, err := strconv.ParseUint(string(w), 16, 32)
			if ok != (err == nil) || ok && uint64(v) != want {
				t.Errorf("hex8(%q) = %#x, %v; strconv: %#x, %v", w, v, ok, want, err)
			}
		}
	}
}
