package usbmon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// TestPcapISOLimitError: a pcap record claiming more ISO descriptors than
// the kernel's limit is a format error that says so once, with one usbmon
// prefix and no sentinel text repeated: "usbmon: pcap offset 24: record
// 1: 512 ISO descriptors (kernel limit 128)". Before, the record's error
// was quoted whole: "record 1: usbmon: 512 ISO descriptors (kernel limit
// 128): usbmon: bad format".
func TestPcapISOLimitError(t *testing.T) {
	var b bytes.Buffer
	le := binary.LittleEndian
	g := make([]byte, 24)
	le.PutUint32(g, 0xa1b2c3d4)
	le.PutUint16(g[4:], 2)
	le.PutUint16(g[6:], 4)
	le.PutUint32(g[16:], 65535)
	le.PutUint32(g[20:], LinkTypeUSBLinuxMmapped)
	b.Write(g)
	rec := make([]byte, 16+64)
	le.PutUint32(rec[8:], 64)
	le.PutUint32(rec[12:], 64)
	h := rec[16:]
	h[8], h[9], h[10], h[11] = 'S', 0, 0x81, 1
	le.PutUint16(h[12:], 1)
	h[14], h[15] = '-', '<'
	le.PutUint32(h[60:], 512)
	b.Write(rec)
	r, _, err := NewReaderOptions(&b, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	err = r.ReadInto(&ev)
	if want := "usbmon: pcap offset 24: record 1: 512 ISO descriptors (kernel limit 128)"; err == nil || err.Error() != want || !errors.Is(err, ErrFormat) {
		t.Errorf("error %v, want %q (ErrFormat)", err, want)
	}
}
