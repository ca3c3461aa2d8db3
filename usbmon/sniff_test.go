package usbmon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"testing"
)

// TestNewReaderRawBinary: a raw copy of /dev/usbmon0 (the kernel's own
// read(2) stream from the lab) is recognised by its content and reads as
// NewBinaryReader reads it; the same events written big-endian are
// recognised as big-endian.
func TestNewReaderRawBinary(t *testing.T) {
	raw, err := os.ReadFile(labFile("lab-usbmon0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	br, _ := NewBinaryReader(bytes.NewReader(raw), HeaderLen48, binary.LittleEndian)
	want := readEvents(t, br)
	r, f, err := NewReader(bytes.NewReader(raw))
	if err != nil || f != FormatBinary {
		t.Fatalf("NewReader: %v, %v", f, err)
	}
	got := readEvents(t, r)
	if len(got) != len(want) || len(got) < 100 || !reflect.DeepEqual(got, want) {
		t.Fatalf("NewReader read %d events, NewBinaryReader %d (or they differ)", len(got), len(want))
	}
	var be []byte
	for _, ev := range want {
		be = AppendPacket(be, ev, HeaderLen48, binary.BigEndian, nil)
	}
	if bo, ok := sniffBinary(be); !ok || bo != binary.BigEndian {
		t.Fatalf("big-endian stream: %v, %v", bo, ok)
	}
	r, _, err = NewReader(bytes.NewReader(be))
	if err != nil {
		t.Fatal(err)
	}
	if got := readEvents(t, r); !reflect.DeepEqual(got, want) {
		t.Fatal("big-endian stream reads differently")
	}
	// Cut inside the last record: the records before it, then an error
	// with the offset of the cut record.
	r, _, err = NewReader(bytes.NewReader(raw[:len(raw)-10]))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var ev Event
	for err = r.ReadInto(&ev); err == nil; err = r.ReadInto(&ev) {
		n++
	}
	var fe *FormatError
	if n != len(want)-1 || !errors.As(err, &fe) || !errors.Is(err, ErrTruncated) || fe.Offset <= 0 {
		t.Fatalf("cut stream: %d events, then %v", n, err)
	}
}

// TestSniffBinaryRejects: other formats and near misses are not raw binary.
func TestSniffBinaryRejects(t *testing.T) {
	for _, name := range []string{"lab-0u.txt", "lab-hidbus-t.txt", "lab-capture.pcapng", "lab-capture.0u", "lab-0s.txt", "README.md"} {
		b, err := os.ReadFile(labFile(name))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := sniffBinary(b[:min(len(b), 512)]); ok {
			t.Errorf("%s taken for raw binary", name)
		}
	}
	raw, _ := os.ReadFile(labFile("lab-usbmon0.bin"))
	h := raw[:HeaderLen48]
	for _, c := range []struct {
		name string
		off  int
		val  byte
	}{
		{"event type", 8, 'X'},
		{"transfer type", 9, 4},
		{"device", 11, 128},
		{"setup flag", 14, 's'},
		{"data flag", 15, '='},
		{"microseconds", 27, 0x7f},
		{"seconds", 23, 1},
	} {
		b := append([]byte(nil), h...)
		b[c.off] = c.val
		if _, ok := sniffBinary(b); ok {
			t.Errorf("%s %#x: taken for raw binary", c.name, c.val)
		}
	}
	if _, ok := sniffBinary(h[:HeaderLen48-1]); ok {
		t.Error("47 bytes taken for a record")
	}
	// A bad second record spoils the first.
	first := HeaderLen48 + int(binary.LittleEndian.Uint32(raw[36:]))
	b := append([]byte(nil), raw[:first+HeaderLen48]...)
	b[first+8] = 'X'
	if _, ok := sniffBinary(b); ok {
		t.Error("a bad second record passed")
	}
}
