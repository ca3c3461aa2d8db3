package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tsharkFrames returns the frame numbers tshark -Y expr selects in file.
func tsharkFrames(t *testing.T, file, expr string) []string {
	t.Helper()
	ts, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	out, err := exec.Command(ts, "-r", file, "-Y", expr, "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark -Y %q %s: %v", expr, file, err)
	}
	return strings.Fields(string(out))
}

// usb read -Y prints the events tshark -Y selects (the first column is
// the event number, tshark's frame.number), and usb convert -Y writes
// them: tshark reads the same count from the converted file.
func TestUSBFilterFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tshark")
	}
	in := usbLab("lab-capture.pcapng")
	const ours = `usb.ep == 0x81 && usb.status != "EINPROGRESS"`
	const theirs = "usb.endpoint_address == 0x81 && usb.urb_status != -115"
	want := tsharkFrames(t, in, theirs)
	if len(want) == 0 {
		t.Fatal("tshark selects nothing: the case tests nothing")
	}
	out, errs, code := runUSB(t, "usb", "read", "-Y", ours, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		got = append(got, strings.Fields(l)[0])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("usb read -Y prints events %v, tshark frames %v", got, want)
	}
	conv := filepath.Join(t.TempDir(), "sel.pcapng")
	if _, errs, code := runUSB(t, "usb", "convert", "--format", "pcapng", "--filter", ours, in, "-o", conv); code != 0 || !strings.Contains(errs, "converted "+strconv.Itoa(len(want))+" of ") {
		t.Fatalf("convert exit %d: %s", code, errs)
	}
	if n := len(tsharkFrames(t, conv, "frame")); n != len(want) {
		t.Errorf("tshark reads %d frames from the converted file, want %d", n, len(want))
	}
	if m := len(tsharkFrames(t, conv, theirs)); m != len(want) {
		t.Errorf("tshark -Y selects %d of the converted file's frames, want all %d", m, len(want))
	}
	// a bad expression is a usage error with its column
	_, errs, code = runUSB(t, "usb", "read", "-Y", "usb.ep = 1", in)
	if code != 2 || !strings.Contains(errs, `column 8: "=" is not an operator`) {
		t.Errorf("bad filter: exit %d, %q", code, errs)
	}
}

// mmio read -Y prints the lines gawk selects; -c counts selected records.
func TestMMIOFilterFlag(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk not installed")
	}
	log := filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log")
	want, err := exec.Command(gawk, `$1 == "W" && $2 == 4 && strtonum($5) >= 0xfebc0100 { print }`, log).Output()
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := runUSB(t, "mmio", "read", "-Y", `mmio.kind == "W" && mmio.width == 4 && mmio.addr >= 0xfebc0100`, log)
	if code != 0 || out != string(want) || len(want) == 0 {
		t.Fatalf("exit %d %s: %d bytes, gawk %d", code, errs, len(out), len(want))
	}
	out, _, _ = runUSB(t, "mmio", "read", "-c", "3", "-Y", `mmio.kind == "W" && mmio.width == 4 && mmio.addr >= 0xfebc0100`, log)
	if lines := strings.SplitAfter(string(want), "\n"); out != strings.Join(lines[:3], "") {
		t.Errorf("-c 3 -Y: %q", out)
	}
	if _, errs, code := runUSB(t, "mmio", "read", "-Y", `mmio.reg == 3`, log); code != 2 || !strings.Contains(errs, "column 13") {
		t.Errorf("bad filter: exit %d %q", code, errs)
	}
}
