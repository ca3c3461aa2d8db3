package usb

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestParseLearningFilter: 'usb.vid == 0x0627' over the lab capture keeps
// the events of the device tshark sees answer GET_DESCRIPTOR with
// idVendor 0x0627, at each address it answers from (0 during enumeration,
// then 5), from that answer on: tshark's 'usb.device_address == A &&
// frame.number >= F' for each answer. Without learning the
// same expression keeps nothing; an empty expression is no filter, a bad
// one an error.
func TestParseLearningFilter(t *testing.T) {
	tshark := needTshark(t)
	path := filepath.Join("..", "testdata", "usbmon", "lab-capture.pcapng")
	out, err := exec.Command(tshark, "-r", path, "-Y", "usb.idVendor == 0x0627", "-T", "fields", "-e", "frame.number", "-e", "usb.device_address").Output()
	if err != nil {
		t.Fatal(err)
	}
	var sel []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			sel = append(sel, "(usb.device_address == "+f[1]+" && frame.number >= "+f[0]+")")
		}
	}
	if len(sel) != 2 {
		t.Fatalf("tshark: %q, want two descriptor answers (address 0, then 5)", out)
	}
	out, err = exec.Command(tshark, "-r", path, "-Y", strings.Join(sel, " || "), "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))

	keep, err := ParseLearningFilter("usb.vid == 0x0627")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ParseFilter("usb.vid == 0x0627", NewIdentities())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, ev := range readAll(t, path) {
		if keep(ev) {
			got = append(got, strconv.Itoa(i+1))
		}
		if plain(ev) {
			t.Fatalf("frame %d kept without learning", i+1)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(want) == 0 {
		t.Errorf("frames kept %v, tshark's %v", got, want)
	}
	if f, err := ParseLearningFilter(""); f != nil || err != nil {
		t.Errorf("empty expression: %v, %v; want no filter", f != nil, err)
	}
	if _, err := ParseLearningFilter("usb.vid =="); err == nil {
		t.Error("a bad expression is no error")
	}
}
