package usbmon

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"testing"
)

// FuzzTextLine: parsing never panics; what parses re-encodes to a line that
// parses to the same event, and re-encoding that is stable.
func FuzzTextLine(f *testing.F) {
	for _, l := range kernelLines1u {
		f.Add([]byte(l), true)
	}
	for _, l := range kernelLines1t {
		f.Add([]byte(l), false)
	}
	f.Fuzz(func(t *testing.T, line []byte, u bool) {
		format := Format1t
		if u {
			format = Format1u
		}
		var ev Event
		if parseTextLine(line, format, &ev) != "" {
			return
		}
		out := AppendText(nil, &ev, format, nil)
		var ev2 Event
		if msg := parseTextLine(trimEOL(out), format, &ev2); msg != "" {
			t.Fatalf("re-encoded %q does not parse: %s", out, msg)
		}
		out2 := AppendText(nil, &ev2, format, nil)
		if !bytes.Equal(out, out2) {
			t.Fatalf("unstable: %q then %q", out, out2)
		}
	})
}

// FuzzDecodePacket: decoding arbitrary bytes never panics; a record that
// decodes re-encodes to an identical decode.
func FuzzDecodePacket(f *testing.F) {
	f.Add(kernelHeader64(binary.LittleEndian), true, true)
	f.Add(kernelHeader64(binary.BigEndian), false, true)
	f.Add(kernelHeader64(binary.LittleEndian)[:48], true, false)
	iso := Event{Type: Callback, Transfer: Isochronous, In: true, NumDesc: 2, ISO: []ISODesc{{0, 0, 3}, {0, 3, 3}},
		Length: 6, Data: []byte{1, 2, 3, 4, 5, 6}, SetupFlag: SetupNone, Fields: HasWallClock | HasBus | HasExtended}
	f.Add(AppendPacket(nil, &iso, 64, binary.LittleEndian, nil), true, true)
	f.Fuzz(func(t *testing.T, b []byte, little, long bool) {
		var bo binary.ByteOrder = binary.BigEndian
		if little {
			bo = binary.LittleEndian
		}
		hl := HeaderLen48
		if long {
			hl = HeaderLen64
		}
		var ev Event
		if DecodePacket(b, hl, bo, &ev, nil) != nil {
			return
		}
		out := AppendPacket(nil, &ev, hl, bo, nil)
		var ev2 Event
		if err := DecodePacket(out, hl, bo, &ev2, nil); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		// A header whose len_cap is below what follows it is written
		// with the true length.
		if actual := uint32(len(ev.ISO)*ISODescLen + len(ev.Data)); hl == HeaderLen64 && ev.CapLen < actual || hl == HeaderLen48 && ev.CapLen < uint32(len(ev.Data)) {
			ev.CapLen = ev2.CapLen
		}
		if !sameEvent(&ev, &ev2) {
			t.Fatalf("round trip differs:\n%+v\n%+v", ev, ev2)
		}
	})
}

// FuzzReader: any input given to NewReader fails cleanly or reads events.
func FuzzReader(f *testing.F) {
	f.Add([]byte(kernelLines1u[0] + "\n" + kernelLines1u[1] + "\n"))
	f.Add(pcapFile(binary.LittleEndian, 220, kernelHeader64(binary.LittleEndian)))
	f.Add(pcapFile(binary.BigEndian, 189, kernelHeader64(binary.BigEndian)[:48]))
	var buf bytes.Buffer
	w, _ := NewPcapngWriter(&buf, 220)
	var ev Event
	DecodePacket(kernelHeader64(binary.LittleEndian), 64, binary.LittleEndian, &ev, nil)
	w.Write(&ev)
	w.Flush()
	f.Add(buf.Bytes())
	f.Add(kernelHeader64(binary.LittleEndian)[:48]) // raw /dev/usbmonN stream
	f.Fuzz(func(t *testing.T, b []byte) {
		r, _, err := NewReaderOptions(bytes.NewReader(b), ReaderOptions{KeepGoing: true})
		if err != nil {
			return
		}
		var ev Event
		for i := 0; i < 10000; i++ {
			if r.ReadInto(&ev) != nil {
				return
			}
		}
	})
}

// FuzzTextFastPaths: the text parser's one-pass fast paths agree with the
// general ones: hex8 with strconv, int32Field with word + parseInt32
// (when it answers at all).
func FuzzTextFastPaths(f *testing.F) {
	for _, s := range []string{"ff1fd9fc", "9AbC0d1E", "-115 31", "0", "2147483648", "-2147483648", "4294967295", "12x", "-", "1:2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 8 {
			v, ok := hex8(b)
			want, err := strconv.ParseUint(string(b[:8]), 16, 32)
			if ok != (err == nil) || ok && uint64(v) != want {
				t.Fatalf("hex8(%q) = %#x, %v; strconv: %#x, %v", b[:8], v, ok, want, err)
			}
		}
		s := scanner{b: b}
		v, ok := s.int32Field()
		g := scanner{b: b}
		w := g.word()
		want, wok := parseInt32(w)
		if ok && (!wok || v != want || s.p != g.p) {
			t.Fatalf("int32Field(%q) = %d at %d; word + parseInt32: %d, %v at %d", b, v, s.p, want, wok, g.p)
		}
		if !ok && s.p != 0 {
			t.Fatalf("int32Field(%q) failed but consumed %d bytes", b, s.p)
		}
	})
}

// FuzzTextFastLine: the fast parser (textfast.go) never accepts a line the
// general parser refuses, decodes every line it accepts as the general
// parser does, takes exactly the line and its '\n', and does not depend
// on the bytes after the line (fastAgrees).
func FuzzTextFastLine(f *testing.F) {
	for _, l := range kernelLines1u {
		f.Add([]byte(l), true)
	}
	for _, l := range kernelLines1t {
		f.Add([]byte(l), false)
	}
	if lab, err := os.ReadFile(labFile("lab-0u.txt")); err == nil {
		for _, l := range bytes.Split(lab, []byte("\n"))[:40] {
			f.Add(l, true)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte, u bool) {
		format := Format1t
		if u {
			format = Format1u
		}
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		fastAgrees(t, line, format)
	})
}
