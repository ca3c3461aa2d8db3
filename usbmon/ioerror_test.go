package usbmon

import (
	"bufio"
	"errors"
	"os"
	"testing"
)

// failingReader returns the first n bytes of data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadErrorIsNotTruncation: a read error in the middle of a pcap or
// pcapng file is returned as itself (exit 1), not as ErrTruncated (data
// lost, exit 3) - found by staticcheck (SA4006 in pcapng.go).
func TestReadErrorIsNotTruncation(t *testing.T) {
	eio := errors.New("input/output error")
	for _, name := range []string{"../testdata/usbmon/lab-capture.pcapng", "../testdata/capture/usb.pcapng"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		// Cut at many places: in headers, in blocks, in data.
		for cut := 30; cut < len(data); cut += 997 {
			rd, _, err := NewReader(bufio.NewReaderSize(&failingReader{data: data[:cut], err: eio}, 4096))
			for err == nil {
				var ev Event
				err = rd.ReadInto(&ev)
			}
			if errors.Is(err, ErrTruncated) || !errors.Is(err, eio) {
				t.Fatalf("%s cut at %d: %v, want the read error", name, cut, err)
			}
		}
	}
	// pcap: written from the pcapng events.
	f, _ := os.Open("../testdata/usbmon/lab-usbmon0.bin")
	defer f.Close()
	rd, _, err := NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	var pcap bytesWriter
	w, err := NewPcapWriter(&pcap, LinkTypeUSBLinuxMmapped)
	if err != nil {
		t.Skip("no pcap writer:", err)
	}
	for {
		var ev Event
		if err := rd.ReadInto(&ev); err != nil {
			break
		}
		w.Write(&ev)
	}
	w.Flush()
	for cut := 10; cut < len(pcap); cut += 1511 {
		rd, _, err := NewReader(bufio.NewReaderSize(&failingReader{data: pcap[:cut], err: eio}, 4096))
		for err == nil {
			var ev Event
			err = rd.ReadInto(&ev)
		}
		if errors.Is(err, ErrTruncated) || !errors.Is(err, eio) {
			t.Fatalf("pcap cut at %d: %v, want the read error", cut, err)
		}
	}
}

type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
