package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportUSBBadRecordNamedOnce: report's error for a usbmon pcap with
// a record that does not decode names the file once, as usb read does
// ("iotap: FILE: usbmon: pcap offset 184: record 3: 512 ISO descriptors
// (kernel limit 128)"). Before: "iotap: FILE: FILE: usbmon: ...".
func TestReportUSBBadRecordNamedOnce(t *testing.T) {
	le := binary.LittleEndian
	b := make([]byte, 24)
	le.PutUint32(b, 0xa1b2c3d4)
	le.PutUint16(b[4:], 2)
	le.PutUint16(b[6:], 4)
	le.PutUint32(b[16:], 65535)
	le.PutUint32(b[20:], 220)
	for i, nd := range []uint32{0, 0, 512} {
		rec := make([]byte, 16+64)
		le.PutUint32(rec, uint32(1000+i))
		le.PutUint32(rec[8:], 64)
		le.PutUint32(rec[12:], 64)
		h := rec[16:]
		le.PutUint64(h, uint64(i+1))
		copy(h[8:16], "S\x02\x81\x01\x01\x00-<")
		le.PutUint64(h[16:], uint64(1000+i))
		le.PutUint32(h[60:], nd)
		b = append(b, rec...)
	}
	path := filepath.Join(t.TempDir(), "iso.pcap")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, rc := runIotap(t, "report", path)
	want := "iotap: " + path + ": usbmon: pcap offset 184: record 3: 512 ISO descriptors (kernel limit 128)\n"
	if rc != 1 || !strings.HasSuffix(stderr, want) || strings.Count(stderr, path) != 1 {
		t.Errorf("rc %d, stderr %q, want it to end %q", rc, stderr, want)
	}
}
