package usbmon

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fastAgrees parses line with parseTextLine and with parseTextFast (the
// line and its '\n' followed by bytes that must not matter, the reader's
// 0 sentinel and its padding) and fails t when the fast parser accepts a
// line the general one refuses or decodes it differently. It reports
// whether the fast parser accepted the line. line holds no '\n'.
func fastAgrees(t testing.TB, line []byte, f Format) bool {
	t.Helper()
	want := Event{Data: make([]byte, 0, maxTextData), ISO: make([]ISODesc, 0, 5)}
	msg := parseTextLine(line, f, &want)
	accepted := false
	for i, fill := range []byte("0f :\n=") {
		after := bytes.Repeat([]byte{fill}, len(fastWindow{}))
		for _, prefix := range []string{"", "ffff888004a1cc00 1 C Bi:1:002:1 0 0\n"} {
			b := append(append(append(append(append([]byte(prefix), line...), '\n'), after...), 0), after...)
			got := dirtyEvent()
			n := parseTextFast(b, len(prefix), f, &got, make([]byte, 0, maxTextData), make([]ISODesc, 0, 5))
			ok := n > 0
			if i > 0 && ok != accepted {
				t.Fatalf("%s %q: the bytes after the line changed the fast parser's answer", f, line)
			}
			accepted = ok
			if !ok {
				if !reflect.DeepEqual(got, dirtyEvent()) {
					t.Fatalf("%s %q: the fast parser refused the line but changed the event: %+v", f, line, got)
				}
				continue
			}
			if n != len(line)+1 {
				t.Fatalf("%s %q: fast parser took %d bytes, want %d", f, line, n, len(line)+1)
			}
			if msg != "" {
				t.Fatalf("%s %q: the fast parser accepted a line the general parser refuses (%s): %+v", f, line, msg, got)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %q: fast and general parsers differ:\nfast    %+v\ngeneral %+v", f, line, got, want)
			}
		}
	}
	// Without its '\n' (the sentinel right after it: a line the reader
	// has not read to its end) the line is never taken.
	for _, fill := range []byte("0 \n") {
		b := append(append(append([]byte(nil), line...), 0), bytes.Repeat([]byte{fill}, len(fastWindow{}))...)
		if n := parseTextFast(b, 0, f, &Event{}, make([]byte, 0, maxTextData), nil); n != 0 {
			t.Fatalf("%s %q: the fast parser took %d bytes of a line cut by the sentinel", f, line, n)
		}
	}
	return accepted
}

// dirtyEvent has every field set: what the reader's previous event left,
// that the fast parser must overwrite or leave alone entirely.
func dirtyEvent() Event {
	return Event{ID: 1, Type: 'X', Transfer: Bulk, In: true, Bus: 9, Device: 9, Endpoint: 9, Status: 7,
		SetupFlag: 'Q', Setup: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}, Interval: 5, StartFrame: 5, ErrorCount: 5, NumDesc: 5,
		ISO: []ISODesc{{1, 2, 3}}, NDesc: 5, Length: 5, CapLen: 5, DataFlag: 'Q', Data: []byte{1, 2, 3}, XferFlags: 5,
		Sec: 5, Usec: 5, TextStamp: 5, Fields: 0xff, Format: FormatPcap}
}

// Every line the kernel printed in the lab, and the corner cases of
// mon_text.c, take the fast path (but for isochronous events and the
// setup filler) and decode as the general parser decodes them.
func TestTextFastTakesKernelLines(t *testing.T) {
	check := func(lines []string, f Format) {
		for _, l := range lines {
			fields := strings.Fields(l)
			general := f == Format1u && fields[2] != "E" && fields[3][0] == 'Z' || // isochronous
				len(fields) > 4 && fields[4] == "Z" // setup filler
			if got := fastAgrees(t, []byte(l), f); got == general {
				t.Errorf("%s %q: fast path taken: %v, want %v", f, l, got, !general)
			}
		}
	}
	check(kernelLines1u, Format1u)
	check(kernelLines1t, Format1t)
	for _, name := range []string{"lab-0u.txt", "lab-capture.0u"} {
		b, err := os.ReadFile(labFile(name))
		if err != nil {
			t.Fatal(err)
		}
		check(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), Format1u)
	}
}

// Lines near the kernel's form but not in it: the fast parser refuses them
// or agrees with the general one.
func TestTextFastNearMisses(t *testing.T) {
	base := []string{
		"ffff888004a1cb00 3004 C Bi:3:007:1 0 65536 = 00010203 04050607 08090a0b 0c0d0e0f 10111213 14151617 18191a1b 1c1d1e1f",
		"ff1fd9fc02a65180 7691990 S Ci:2:001:0 s a3 00 0000 0002 0004 4 <",
		"ffff8880041b0000 13 C Ii:1:002:1 0:8 8 = 00000400 00000000",
		"d5ea89a0 4294967295 S Co:1:127:0 s 21 09 0200 0000 0001 1 = 01",
	}
	edits := []string{" ", "  ", "0", "9", "-", ":", "=", "x", "F", "\t", ""}
	n := 0
	for _, l := range base {
		for i := 0; i <= len(l); i++ {
			for _, e := range edits {
				// Insert e at i, and replace the byte at i by e.
				fastAgrees(t, []byte(l[:i]+e+l[i:]), Format1u)
				if i < len(l) {
					fastAgrees(t, []byte(l[:i]+e+l[i+1:]), Format1u)
					fastAgrees(t, []byte(l[:i]+e+l[i+1:]), Format1t)
				}
				n++
			}
		}
		for _, cut := range []int{1, 2, 3, 9} {
			fastAgrees(t, []byte(l[:len(l)-cut]), Format1u)
		}
	}
	for _, l := range []string{
		"d5ea89a0 4294967296 S Co:1:127:0 0 0",
		"d5ea89a0 04294967295 S Co:1:127:0 0 0",
		"d5ea89a0 0000000001 S Co:1:127:0 0 0",
		"d5ea89a0 1 S Co:65536:127:0 0 0",
		"d5ea89a0 1 S Co:65535:255:127 0 0",
		"d5ea89a0 1 S Co:1:256:0 0 0",
		"d5ea89a0 1 C Bi:1:002:15 0 0",
		"d5ea89a0 1 C Bi:1:002:150 0 0",
		"d5ea89a0 1 C Bi:1:999:1 0 0",
		"d5ea89a0 1 C Bi:1:255:99 0 0",
		"d5ea89a0 1 C Bi:12:255:9 0 0",
		"d5ea89a0 1 C Bi:1:0025:9 0 0",
		"d5ea89a0 1 C Bi:1:02:9 0 0",
		"d5ea89a0 1 C Bi:1:002:9  0 0",
		"d5ea89a0 1 C Bi:1:002: 0 0",
		"d5ea89a0 1 S Bo:1:002:1 -1150 1 <",
		"d5ea89a0 1 S Bo:1:002:1 -11 1 <",
		"d5ea89a0 1 S Bo:1:002:1 -115  1 <",
		"d5ea89a0 1 C Bo:1:002:1 00 1 >",
		"d5ea89a0 1 C Bo:1:002:1 0:1 1 >",
		"d5ea89a0 1 C Ii:1:002:1 -115:8 1 <",
		"d5ea89a0 1 C Ii:1:002:1 -115 8 1 <",
		"d5ea89a0 1 C Ii:1:002:1 0 8 1 <",
		"d5ea89a0 1 C Ii:1:002:1 0:-8 1 <",
		"d5ea89a0 1 S Co:1:1:128 0 0",
		"d5ea89a0 1 S Co:1:1:1 -9999999 99999999 <",
		"d5ea89a0 1 S Co:1:1:1 -9999999 999999999 <",
		"d5ea89a0 1 S Co:1:1:1 12345678 1 <",
		"d5ea89a0 1 S Co:1:1:1 0 -1",
		"d5ea89a0 1 S Co:1:1:1 0 0 <",
		"d5ea89a0 1 S Co:1:1:1 0 1 =",
		"d5ea89a0 1 S Co:1:1:1 0 1 = ",
		"d5ea89a0 1 S Co:1:1:1 0 1 = 00 11",
		"d5ea89a0 1 S Co:1:1:1 0 1 = 001122334",
		"d5ea89a0 1 S Co:1:1:1 0 1 = 0011223344",
		"d5ea89a0 1 S Co:1:1:1 0 1 = 00112233 44556677 8899aabb ccddeeff 00112233 44556677 8899aabb ccddeeff 00",
		"d5ea89a0 1 S Co:1:1:1 0 1 = 00112233 44556677 8899aabb ccddeeff 00112233 44556677 8899aabb ccddeeff 00112233",
		"d5ea89a0 1 S Co:1:1:1 0 1 \x7f",
		"d5ea89a0 1 S Ii:1:1:1 -115:8 8 <",
		"d5ea89a0 1 S Ii:1:1:1 -115 8 <",
		"d5ea89a0 1 E Ii:1:1:1 -19 0",
		"d5ea89a0 1 S Ci:1:1:0 s a3 00 0000 0003 0004 4 <",
		"d5ea89a0 1 S Ci:1:1:0 s A3 0G 0000 0003 0004 4 <",
		"d5ea89a0 1 S Ci:1:1:0 s a3 00 0000 0003 00040 4 <",
	} {
		fastAgrees(t, []byte(l), Format1u)
		fastAgrees(t, []byte(l), Format1t)
	}
}

// The decimal SWAR helpers agree with strconv on every digit count and on
// words with a non-digit in each position.
func TestSwarDecimal(t *testing.T) {
	probe := []byte("0123456789/:@ -\x00\xb0\xff")
	base := []byte("40960123")
	for pos := 0; pos < 8; pos++ {
		for _, c := range probe {
			w := append([]byte(nil), base...)
			w[pos] = c
			k, d := swarDigits(leWord(w))
			want := 0
			for want < 8 && w[want] >= '0' && w[want] <= '9' {
				want++
			}
			if k != want {
				t.Fatalf("swarDigits(%q) = %d digits, want %d", w, k, want)
			}
			for n := 1; n <= k; n++ {
				v := swarDecValue(d, n)
				wv, _ := strconv.ParseUint("0"+string(w[:n]), 10, 64)
				if v != wv {
					t.Fatalf("swarDecValue(%q, %d) = %d, want %d", w, n, v, wv)
				}
			}
		}
	}
}

func leWord(w []byte) uint64 {
	var x uint64
	for i := 7; i >= 0; i-- {
		x = x<<8 | uint64(w[i])
	}
	return x
}

// The reader (fast path, lines at every position of its buffer, some
// copied because they end it) gives the events the general parser gives,
// line by line.
func TestTextFastReader(t *testing.T) {
	one, err := os.ReadFile(labFile("lab-0u.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for i := 0; in.Len() < 300<<10; i++ {
		in.Write(one)
		in.WriteString(strings.Repeat("ffff888004a1cc00 1 C Bi:1:002:1 0 0\n", i%3)) // shift the alignment
	}
	r, f, err := NewReader(bytes.NewReader(in.Bytes()))
	if err != nil || f != Format1u {
		t.Fatal(f, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(in.Bytes()))
	var ev Event
	lines := 0
	for sc.Scan() {
		lines++
		want := Event{Data: make([]byte, 0, maxTextData), ISO: make([]ISODesc, 0, 5)}
		if msg := parseTextLine(sc.Bytes(), Format1u, &want); msg != "" {
			t.Fatalf("line %d: %s", lines, msg)
		}
		if err := r.ReadInto(&ev); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		if !sameEvent(&ev, &want) {
			t.Fatalf("line %d %q:\nreader  %+v\ngeneral %+v", lines, sc.Bytes(), ev, want)
		}
	}
	if err := r.ReadInto(&ev); err != io.EOF {
		t.Fatalf("after %d lines: %v, want EOF", lines, err)
	}
}

// BenchmarkTextLine: the parsers alone (no reader) over the lab's lines:
// the general parser, then the fast one.
func BenchmarkTextLine(b *testing.B) {
	one, err := os.ReadFile(labFile("lab-0u.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	for _, l := range bytes.Split(bytes.TrimSuffix(one, []byte("\n")), []byte("\n")) {
		// The line, its '\n', the sentinel and the padding.
		lines = append(lines, append(append(l, '\n', 0), make([]byte, len(fastWindow{}))...)[:len(l)])
	}
	ev := Event{Data: make([]byte, 0, maxTextData), ISO: make([]ISODesc, 0, 5)}
	data, iso := ev.Data, ev.ISO
	b.Run("general", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ev.reset()
			ev.Data = data
			parseTextLine(lines[i%len(lines)], Format1u, &ev)
		}
	})
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			l := lines[i%len(lines)]
			if parseTextFast(l[:cap(l)], 0, Format1u, &ev, data, iso) == 0 {
				b.Fatalf("%q: not taken", l)
			}
		}
	})
}

// Random events written as the kernel writes them (AppendText), then
// each with one byte changed: the fast parser takes every unchanged
// line but the isochronous ones and agrees with the general parser on
// all.
func TestTextFastRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	statuses := []int32{0, -115, -2, -32, -71, -104, 1, -1000000}
	taken := 0
	n := 3000
	if testing.Short() {
		n = 600
	}
	for i := 0; i < n; i++ {
		ev := Event{ID: rng.Uint64(), TextStamp: rng.Uint32(), Type: EventType("SCE"[rng.IntN(3)]),
			Transfer: TransferType(rng.IntN(4)), In: rng.IntN(2) == 0, Device: uint8(rng.IntN(128)),
			Endpoint: uint8(rng.IntN(16)), Status: statuses[rng.IntN(len(statuses))], SetupFlag: SetupNone,
			Fields: HasTextStamp | HasBus, Format: Format1u}
		if rng.IntN(8) == 0 {
			ev.ID >>= 32 // a 32-bit kernel's tag
		}
		if rng.IntN(3) == 0 {
			ev.TextStamp %= 1000
		}
		ev.Bus = uint16(rng.IntN(4))
		if rng.IntN(5) == 0 {
			ev.Bus = uint16(rng.IntN(1 << 16))
		}
		if ev.Transfer == Interrupt || ev.Transfer == Isochronous {
			ev.Fields |= HasTextExt
			ev.Interval = int32(rng.IntN(20))
		}
		if ev.Transfer == Control && ev.Type == Submission && rng.IntN(2) == 0 {
			ev.SetupFlag = SetupPresent
			for j := range ev.Setup {
				ev.Setup[j] = byte(rng.Uint32())
			}
			ev.Status = -115
		}
		ev.Length = uint32(rng.IntN(100000))
		switch rng.IntN(4) {
		case 0:
			ev.DataFlag = "<>ZDE"[rng.IntN(5)]
		case 1:
			ev.Length = 0
			ev.DataFlag = 'L'
		default:
			ev.DataFlag = DataPresent
			ev.Data = make([]byte, rng.IntN(33))
			for j := range ev.Data {
				ev.Data[j] = byte(rng.Uint32())
			}
			ev.Length = max(ev.Length, uint32(len(ev.Data)))
		}
		for _, f := range []Format{Format1u, Format1t} {
			line := bytes.TrimSuffix(AppendText(nil, &ev, f, nil), []byte("\n"))
			iso := f == Format1u && ev.Type != SubmitError && ev.Transfer == Isochronous
			if got := fastAgrees(t, line, f); got == iso {
				t.Fatalf("%s %q: fast path taken: %v", f, line, got)
			}
			taken++
			for _, c := range []byte("0 :-\n\x00zF9") {
				m := append([]byte(nil), line...)
				m[rng.IntN(len(m))] = c
				if j := bytes.IndexByte(m, '\n'); j >= 0 {
					m = m[:j]
				}
				fastAgrees(t, m, f)
			}
		}
	}
	t.Logf("%d lines", taken)
}
