package usbmon

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tsharkCount is how many packets of file tshark's display filter
// selects.
func tsharkCount(t *testing.T, file, filter string) int {
	t.Helper()
	path, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (apt-get install tshark)")
	}
	out, err := exec.Command(path, "-r", file, "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark -Y %q %s: %v", filter, file, err)
	}
	return strings.Count(string(out), "\n")
}

// TestConvert: Convert of the lab's pcapng capture, keeping endpoint 1 IN,
// to pcapng (link type 220) and pcap (189) writes files tshark decodes
// field for field as the events we read back (compareWithTshark), as
// many as tshark's 'usb.endpoint_address == 0x81' selects from the input,
// of the input's packets; 189 cannot hold the interval of the interrupt
// URBs, which Unheld and Summary say. A text input with an unreadable
// line is an error without KeepGoing and a skip reported to OnSkip with
// it.
func TestConvert(t *testing.T) {
	in := filepath.Join("..", "testdata", "usbmon", "lab-capture.pcapng")
	total := tsharkCount(t, in, "frame")
	kept := tsharkCount(t, in, "usb.endpoint_address == 0x81")
	if kept == 0 || kept == total {
		t.Fatalf("the filter keeps %d of %d packets: nothing to check", kept, total)
	}
	for _, c := range []struct {
		to       Format
		linkType int
		unheld   bool
	}{{FormatPcapng, LinkTypeUSBLinuxMmapped, false}, {FormatPcap, LinkTypeUSBLinux, true}} {
		src, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out."+c.to.String())
		dst, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Convert(context.Background(), src, dst, ConvertOptions{Format: c.to, LinkType: c.linkType,
			Keep: func(ev *Event) bool { return ev.In && ev.Endpoint == 1 }})
		src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.to, err)
		}
		if n := compareWithTshark(t, out); n != kept || res.Events != kept || res.Read != total || res.From != FormatPcapng {
			t.Errorf("%s: tshark reads %d packets, Convert says %d of %d from %s; tshark selects %d of %d", c.to, n, res.Events, res.Read, res.From, kept, total)
		}
		if (res.Unheld.Total() > 0) != c.unheld || len(res.Summary()) != map[bool]int{false: 1, true: 2}[c.unheld] {
			t.Errorf("%s: unheld %q, summary %q", c.to, res.Unheld, res.Summary())
		}
		if lost, err := res.Loss(); len(lost) != 0 || err != nil {
			t.Errorf("%s: loss %q, %v", c.to, lost, err)
		}
	}

	text, err := os.ReadFile(filepath.Join("..", "testdata", "usbmon", "lab-0u.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(text), "\n")
	bad := strings.Join(lines[:20], "") + "not a usbmon line\n" + strings.Join(lines[20:], "")
	var out bytes.Buffer
	if res, err := Convert(context.Background(), strings.NewReader(bad), &out, ConvertOptions{Format: Format1u}); err == nil {
		if _, lerr := res.Loss(); lerr == nil {
			t.Error("an unreadable line without KeepGoing: no error")
		}
	}
	var skipped []error
	out.Reset()
	res, err := Convert(context.Background(), strings.NewReader(bad), &out, ConvertOptions{Format: Format1u, KeepGoing: true, OnSkip: func(err error) { skipped = append(skipped, err) }})
	if err != nil || len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "21") {
		t.Errorf("KeepGoing: %v, skipped %v; want line 21 skipped", err, skipped)
	}
	if want := strings.Count(string(text), "\n"); res.Events != want || strings.Count(out.String(), "\n") != want {
		t.Errorf("KeepGoing: %d events converted, %d lines out; want the input's %d", res.Events, strings.Count(out.String(), "\n"), want)
	}
}
