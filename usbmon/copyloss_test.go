package usbmon

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestCopyResultLoss: what usb convert reports lost — lines skipped by
// a KeepGoing text reader, a cut pcapng (the events before the cut are
// copied), a bad line without KeepGoing an error, not a loss.
func TestCopyResultLoss(t *testing.T) {
	txt, err := os.ReadFile("../testdata/usbmon/lab-0u.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(txt), "\n")
	bad := strings.Join(lines[:20], "") + "not a usbmon line\n" + strings.Join(lines[20:30], "")
	cp := func(data []byte, keepGoing bool) CopyResult {
		t.Helper()
		r, _, err := NewReaderOptions(bytes.NewReader(data), ReaderOptions{KeepGoing: keepGoing})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		w, _ := NewWriter(&out, Format1u)
		res, err := CopyIf(context.Background(), w, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := cp([]byte(bad), true)
	if lost, err := res.Loss(); err != nil || res.Events != 30 || res.Skipped != 1 || len(lost) != 1 || lost[0] != "1 unreadable lines skipped" {
		t.Errorf("keep going: %+v: %q, %v", res, lost, err)
	}
	res = cp([]byte(bad), false)
	if lost, err := res.Loss(); err == nil || lost != nil || res.Events != 20 {
		t.Errorf("bad line: %+v: %q, %v", res, lost, err)
	}
	ng, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	res = cp(ng[:3000], false)
	if lost, err := res.Loss(); err != nil || len(lost) != 1 || !errors.Is(res.ReadErr, ErrTruncated) || lost[0] != res.ReadErr.Error() || res.Events == 0 {
		t.Errorf("cut pcapng: %+v: %q, %v", res, lost, err)
	}
	if lost, err := (CopyResult{Dropped: 3}).Loss(); err != nil || len(lost) != 1 || lost[0] != "the capture records 3 events dropped by the kernel" {
		t.Errorf("dropped: %q, %v", lost, err)
	}
}

// TestNewWriterLinkType: pcap and pcapng headers name the link type
// asked for, and the events read back are the same.
func TestNewWriterLinkType(t *testing.T) {
	for _, f := range []Format{FormatPcap, FormatPcapng} {
		for _, lt := range []int{LinkTypeUSBLinux, LinkTypeUSBLinuxMmapped} {
			var out bytes.Buffer
			w, err := NewWriterLinkType(&out, f, lt)
			if err != nil {
				t.Fatal(err)
			}
			ev := Event{ID: 1, Type: Submission, Transfer: Bulk, Bus: 1, Device: 2, Endpoint: 3, Length: 4, Data: []byte{1, 2, 3, 4}}
			if err := w.Write(&ev); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			b := out.Bytes()
			var got uint32
			if f == FormatPcap {
				got = binary.LittleEndian.Uint32(b[20:]) // pcap global header: network
			} else {
				shb := binary.LittleEndian.Uint32(b[4:])
				got = uint32(binary.LittleEndian.Uint16(b[shb+8:])) // IDB: LinkType
			}
			if got != uint32(lt) {
				t.Errorf("%s %d: header says link type %d", f, lt, got)
			}
			r, _, err := NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			var back Event
			if err := r.ReadInto(&back); err != nil || back.ID != 1 || !bytes.Equal(back.Data, ev.Data) {
				t.Errorf("%s %d: read back %+v, %v", f, lt, back, err)
			}
		}
	}
	if _, err := NewWriterLinkType(&bytes.Buffer{}, FormatBinary, LinkTypeUSBLinux); err == nil {
		t.Errorf("binary format written")
	}
}
