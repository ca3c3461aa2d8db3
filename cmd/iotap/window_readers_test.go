package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestWindowPastEndSaid: a window that starts after the input's last
// record says so on usb read, pair and stats and events read, exit 0, as
// cut and mmio read do (they printed nothing and said nothing before);
// a window inside the input says nothing of the kind.
func TestWindowPastEndSaid(t *testing.T) {
	const usbDir = "../../testdata/usbmon/"
	perf := "../../userevents/testdata/linuxtracepoints/perf.data"
	cases := [][]string{
		{"usb", "read", usbDir + "lab-capture.pcapng"},
		{"usb", "read", usbDir + "lab-0u.txt"},
		{"usb", "read", "--json", usbDir + "lab-capture.pcapng"},
		{"usb", "pair", usbDir + "lab-capture.pcapng"},
		{"usb", "stats", usbDir + "lab-capture.pcapng"},
		{"mmio", "read", "../../testdata/mmiotrace/e1000-probe.log"},
	}
	if _, err := os.Stat(perf); err == nil {
		cases = append(cases, []string{"events", "read", perf})
	}
	for _, c := range cases {
		in := c[len(c)-1]
		args := append(append(append([]string(nil), c[:len(c)-1]...), "--from", "1000"), in)
		out, errOut, code := runMMIO(t, args...)
		want := "iotap: warning: " + in + ": the window [1000..) starts after the input's last record: 0 events kept\n"
		if code != 0 || strings.Count(errOut, want) != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 0 and %q", args, code, errOut, want)
		}
		if c[0] == "usb" && c[1] == "read" && c[2] != "--json" && out != "" {
			t.Errorf("%q printed %q", args, out)
		}
		args = append(append(append([]string(nil), c[:len(c)-1]...), "--from", "0.0001"), in)
		if _, errOut, code := runMMIO(t, args...); code != 0 || strings.Contains(errOut, "starts after") {
			t.Errorf("%q: exit %d, stderr %q; want 0, no past-end warning", args, code, errOut)
		}
	}
}

// TestUSBWindowFromCaptureStart: a window's relative ends count from the
// capture's first event whatever the other filters keep, as tshark's
// frame.time_relative does. --dev 5 --from 14.8 --to 14.82 prints the
// events tshark selects with usb.device_address == 5 and
// frame.time_relative in [14.8, 14.82): before, the window counted from
// device 5's first event (14.79 s into the capture) and printed none.
func TestUSBWindowFromCaptureStart(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	const in = "../../testdata/usbmon/lab-capture.pcapng"
	b, err := exec.Command(tshark, "-r", in, "-Y", "usb.device_address == 5 && frame.time_relative >= 14.8 && frame.time_relative < 14.82",
		"-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(b))
	out, errOut, code := runMMIO(t, "usb", "read", "--dev", "5", "--from", "14.8", "--to", "14.82", in)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			got = append(got, f[0])
		}
	}
	if code != 0 || len(want) == 0 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("exit %d (%s): events %v, tshark %v", code, errOut, got, want)
	}
}
