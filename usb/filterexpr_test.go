package usb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/filter"
)

// filterCases pairs an expression in iotap's spelling with the same test
// in tshark's (empty: the same text). The tshark spelling uses only
// tshark's own field names and numbers, so that aliases and value names
// are checked too.
var filterCases = []struct{ ours, tshark string }{
	{"usb.ep == 0x81 && usb.status != 0", "usb.endpoint_address == 0x81 && usb.urb_status != 0"},
	{"usb.endpoint_address == 0x81", ""},
	{"usb.endpoint_address.number == 1 && usb.endpoint_address.direction == 0", ""},
	{`usb.dir == "in"`, "usb.endpoint_address.direction == 1"},
	{"usb.device_address == 2 || usb.dev > 5", "usb.device_address == 2 || usb.device_address > 5"},
	{"usb.bus_id == 1 and not usb.device_address == 1", ""},
	{`usb.type == "bulk"`, "usb.transfer_type == 3"},
	{"usb.transfer_type == 0x01 && usb.urb_type == 'C'", ""},
	{`usb.urb_type == "S" && usb.transfer_type != 2`, "usb.urb_type == 'S' && usb.transfer_type != 2"},
	{"usb.urb_status < 0 && usb.urb_status != -115", ""},
	{`usb.status == "stall" || usb.status == "ENOENT"`, "usb.urb_status == -32 || usb.urb_status == -2"},
	{"usb.urb_len > 64", ""},
	{"usb.data_len >= 8 && usb.data_len <= 64", ""},
	{"usb.len == usb.data_len", "usb.urb_len == usb.data_len"},
	{"usb.setup.bRequest == 6 && usb.setup.wLength >= 18", ""},
	{"usb.setup.request == 6 && usb.setup.value >= 0x0100 && usb.setup.value < 0x0200", "usb.setup.bRequest == 6 && usb.bDescriptorType == 1"},
	{"usb.setup.request == 9 && usb.bmRequestType == 0x21", "usbhid.setup.bRequest == 9"},
	{"usb.bmRequestType == 0x80 && usb.setup.wLength == 18", ""},
	{"usb.setup.bRequest", ""},
	{"!(usb.setup.bRequest == 6)", ""},
	{"usb.setup.bRequest != 6 && usb.transfer_type == 2", ""},
	{"usb.interval > 0", ""},
	{"usb.copy_of_transfer_flags == 0x200", ""},
	{"usb.iso.numdesc == 0 && usb.interval < 1", ""},
	{"usb.urb_ts_usec < 500000 && usb.urb_ts_sec >= 0", ""},
	{"(usb.ep == 0 || usb.ep == 0x80) && !(usb.urb_status == 0)", "(usb.endpoint_address == 0 || usb.endpoint_address == 0x80) && !(usb.urb_status == 0)"},
}

// TestFilterAgreesWithTshark: for every expression, the events
// ParseFilter selects are the frames tshark -Y selects, on one pcapng
// that mergecap concatenates from the bundled lab captures (link type
// 220) and the shared third-party ones (link types 189 and 220): one
// tshark run per expression instead of one per file.
func TestFilterAgreesWithTshark(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tshark (slow)")
	}
	ts := needTshark(t)
	mergecap, err := exec.LookPath("mergecap")
	if err != nil {
		t.Skip("mergecap not installed (apt-get install wireshark-common)")
	}
	inputs := []string{"../testdata/usbmon/lab-capture.pcapng", "../testdata/capture/usb.pcapng", "testdata/lab-inject.pcapng"}
	for _, name := range []string{"usbmon-tools-test1.pcap", "km003c-pd-capture.pcapng"} {
		if p := filepath.Join(sharedUSB, name); fileExists(p) {
			inputs = append(inputs, p)
		} else {
			t.Logf("%s absent: not in the merged capture", p)
		}
	}
	merged := filepath.Join(t.TempDir(), "merged.pcapng")
	if out, err := exec.Command(mergecap, append([]string{"-a", "-F", "pcapng", "-w", merged}, inputs...)...).CombinedOutput(); err != nil {
		t.Fatalf("mergecap: %v\n%s", err, out)
	}
	evs := readAll(t, merged)
	for _, c := range filterCases {
		want := c.tshark
		if want == "" {
			want = c.ours
		}
		cmd := exec.Command(ts, "-r", merged, "-Y", want, "-T", "fields", "-e", "frame.number")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark -Y %q: %v\n%s", want, err, stderr.String())
		}
		tsharkFrames := strings.Fields(string(out))
		f, err := ParseFilter(c.ours, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.ours, err)
		}
		var ours []string
		for i, ev := range evs {
			if f(ev) {
				ours = append(ours, strconv.Itoa(i+1))
			}
		}
		if strings.Join(ours, " ") != strings.Join(tsharkFrames, " ") {
			t.Errorf("%s: we select %d frames, tshark -Y %q %d\nours:   %s\ntshark: %s", c.ours, len(ours), want, len(tsharkFrames), head(ours), head(tsharkFrames))
		} else if len(ours) == 0 || len(ours) == len(evs) {
			t.Errorf("%s selects %d of %d frames: the case tests nothing", c.ours, len(ours), len(evs))
		}
	}
}

func head(s []string) string {
	if len(s) > 20 {
		return strings.Join(s[:20], " ") + " ..."
	}
	return strings.Join(s, " ")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestFilterFieldsNames(t *testing.T) {
	for _, bad := range []struct{ expr, msg string }{
		{"usb.endpoint == 1", `column 1: unknown field "usb.endpoint"`},
		{`usb.type == "bluk"`, `"bluk" is not a value of usb.transfer_type (want iso, intr, ctrl, bulk`},
		{`usb.status == "EWHAT"`, "not a value of usb.urb_status"},
	} {
		_, err := ParseFilter(bad.expr, nil)
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s: error %v, want %q", bad.expr, err, bad.msg)
		}
	}
	// every field and alias compiles
	for _, f := range FilterFields(nil).Fields() {
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if _, err := filter.ParseCompile(n, FilterFields(nil)); err != nil {
				t.Errorf("%s: %v", n, err)
			}
		}
	}
}

// docs/filters.md lists every field and alias.
func TestFilterFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/filters.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range FilterFields(nil).Fields() {
		if !bytes.Contains(doc, []byte("| `"+f.Name+"` |")) {
			t.Errorf("docs/filters.md has no row for %s", f.Name)
		}
		for _, a := range f.Aliases {
			if !bytes.Contains(doc, []byte("`"+a+"`")) {
				t.Errorf("docs/filters.md does not name the alias %s", a)
			}
		}
	}
}
