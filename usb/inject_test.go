package usb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/usbmon"
)

// A HID mouse: device descriptor, one configuration with one HID
// interface and an interrupt IN endpoint, and its report descriptor.
var (
	injDevice = []byte{18, 1, 0x00, 0x02, 0, 0, 0, 64, 0x27, 0x06, 0x01, 0x00, 0x00, 0x01, 1, 2, 3, 1}
	injConfig = []byte{9, 2, 34, 0, 1, 1, 0, 0xa0, 50,
		9, 4, 0, 0, 1, 3, 1, 2, 0,
		9, 0x21, 0x11, 0x01, 0, 1, 0x22, 4, 0,
		7, 5, 0x81, 3, 4, 0, 10}
	injReport = []byte{0x05, 0x01, 0x09, 0x02}
)

func injTree(t *testing.T, descriptors []byte) string {
	root := t.TempDir()
	dev := filepath.Join(root, "1-1")
	hid := filepath.Join(root, "1-1:1.0", "0003:0627:0001.0001")
	for _, d := range []string{dev, hid} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := func(p, s string) { os.WriteFile(p, []byte(s), 0o644) }
	w(filepath.Join(dev, "busnum"), "1\n")
	w(filepath.Join(dev, "devnum"), "2\n")
	if descriptors != nil {
		w(filepath.Join(dev, "descriptors"), string(descriptors))
	}
	w(filepath.Join(root, "1-1:1.0", "bInterfaceNumber"), "00\n")
	w(filepath.Join(hid, "report_descriptor"), string(injReport))
	return root
}

func TestDescriptorEvents(t *testing.T) {
	root := injTree(t, append(append([]byte{}, injDevice...), injConfig...))
	evs, errs := DescriptorEvents(root, time.Unix(1700000000, 0), nil)
	if len(errs) != 0 || len(evs) != 6 {
		t.Fatalf("%d events, errors %v", len(evs), errs)
	}
	want := []struct {
		setup string
		data  []byte
	}{{"8006000100001200", injDevice}, {"8006000200002200", injConfig}, {"8106002200000400", injReport}}
	for i, w := range want {
		s, c := evs[2*i], evs[2*i+1]
		if !s.Synthesized || !c.Synthesized || s.Type != usbmon.Submission || c.Type != usbmon.Callback || s.ID != c.ID {
			t.Errorf("pair %d: %+v %+v", i, s, c)
		}
		if got := strings.ToLower(strings.ReplaceAll(string(hexOf(s.Setup[:])), " ", "")); got != w.setup {
			t.Errorf("pair %d setup %s, want %s", i, got, w.setup)
		}
		if !bytes.Equal(c.Data, w.data) {
			t.Errorf("pair %d data % x", i, c.Data)
		}
	}

	// Written to pcapng, read back: flagged, and left out of the stats.
	var buf bytes.Buffer
	pw, err := usbmon.NewPcapngWriter(&buf, 220)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := pw.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	pw.Flush()
	rd, _, err := usbmon.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	st := NewStats()
	n := 0
	for {
		ev, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !ev.Synthesized {
			t.Errorf("event %d read back without the synthesized flag", n)
		}
		if _, ok := st.Add(ev); ok {
			t.Errorf("event %d paired", n)
		}
	}
	if n != 6 || st.Events() != 0 || len(st.Endpoints()) != 0 || st.Pairer.Counts().Synthesized != 6 || st.Pairer.Counts().Pairs != 0 {
		t.Errorf("read %d, stats counted %d events, %d endpoints, counts %+v", n, st.Events(), len(st.Endpoints()), st.Pairer.Counts())
	}

	// Oracle: tshark sees the comments and decodes the descriptors.
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed (apt-get install tshark)")
	}
	p := filepath.Join(t.TempDir(), "inj.pcapng")
	os.WriteFile(p, buf.Bytes(), 0o600)
	out, err := exec.Command("tshark", "-r", p, "-T", "fields", "-E", "separator=|", "-e", "frame.comment", "-e", "usb.idVendor", "-e", "usb.bInterfaceClass", "-e", "usbhid.item.global.usage", "-e", "usbhid.item.bTag").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	s := string(out)
	t.Logf("tshark:\n%s", s)
	if strings.Count(s, usbmon.SynthesizedComment) != 6 || !strings.Contains(s, "|0x0627|") ||
		!strings.Contains(s, "|0x03|0x01|") { // the report descriptor's items decoded
		t.Errorf("tshark:\n%s", s)
	}
}

func hexOf(b []byte) string {
	const h = "0123456789abcdef"
	var o []byte
	for _, c := range b {
		o = append(o, h[c>>4], h[c&15])
	}
	return string(o)
}

func TestDescriptorEventsBadSysfs(t *testing.T) {
	// Unreadable (here: missing) descriptors: an error naming the device,
	// the other devices go on.
	_, errs := DescriptorEvents(injTree(t, nil), time.Now(), nil)
	if len(errs) != 1 || !errors.Is(errs[0], os.ErrNotExist) || !strings.Contains(errs[0].Error(), "1-1 (bus 1 device 2) not injected") {
		t.Errorf("missing descriptors: %v", errs)
	}
	// A configuration cut short: the device descriptor still goes in.
	evs, errs := DescriptorEvents(injTree(t, append(append([]byte{}, injDevice...), injConfig[:20]...)), time.Now(), nil)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "wTotalLength 34, 20 bytes left") || len(evs) != 4 {
		t.Errorf("cut configuration: %d events, %v", len(evs), errs)
	}
}

// TestInjectedIdentities reads two captures the lab made at the same time
// after enumeration (TestLabInjectDescriptors): lab-inject.pcapng with the
// descriptors injected at capture start, lab-inject-raw.pcapng without. With
// them, iotap's own decoder knows every device's vendor, product and
// interface classes (as tshark reads them from the same frames) and decodes
// the keyboard's HID reports on exactly the frames tshark decodes as HID;
// without them it knows none and decodes no HID, like tshark.
func TestInjectedIdentities(t *testing.T) {
	type devKey struct {
		bus uint16
		dev uint8
	}
	run := func(path string) (ids *Identities, hid []uint64, keyA bool) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, _, err := usbmon.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		pl := NewPipeline(r, nil, nil)
		dec := NewDecoder(pl.Identities)
		err = pl.Each(context.Background(), func(seq uint64, ev *usbmon.Event, p Pair, paired bool) error {
			d := dec.Decode(ev, p, paired)
			if strings.HasPrefix(d.Summary, "HID input") {
				hid = append(hid, seq)
				keyA = keyA || strings.Contains(d.Summary, "Key a")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return pl.Identities, hid, keyA
	}
	tshark := func(path, filter string, fields ...string) [][]string {
		args := []string{"-r", path, "-Y", filter, "-T", "fields"}
		for _, f := range fields {
			args = append(args, "-e", f)
		}
		out, err := exec.Command(needTshark(t), args...).Output()
		if err != nil {
			t.Fatalf("tshark %v: %v", args, err)
		}
		var rows [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				rows = append(rows, strings.Split(l, "\t"))
			}
		}
		return rows
	}
	inj, raw := filepath.Join("testdata", "lab-inject.pcapng"), filepath.Join("testdata", "lab-inject-raw.pcapng")

	ids, hid, keyA := run(inj)
	// Identities: tshark's reading of the injected device descriptors.
	want := map[devKey]string{}
	for _, r := range tshark(inj, "usb.idVendor", "usb.bus_id", "usb.device_address", "usb.idVendor", "usb.idProduct") {
		b, _ := strconv.Atoi(r[0])
		d, _ := strconv.Atoi(r[1])
		want[devKey{uint16(b), uint8(d)}] = r[2] + ":" + r[3]
	}
	if len(want) < 4 {
		t.Fatalf("tshark found %d devices", len(want))
	}
	for k, w := range want {
		info, ok := ids.Lookup(k.bus, k.dev)
		if !ok || !info.HasID || fmt.Sprintf("0x%04x:0x%04x", info.Vendor, info.Product) != w || info.Source != "sysfs" {
			t.Errorf("%d:%03d: iotap knows %+v, tshark says %s", k.bus, k.dev, info, w)
		}
	}
	// Interface classes of interface 0 (the only one these devices have).
	for _, r := range tshark(inj, "usb.bInterfaceNumber == 0", "usb.bus_id", "usb.device_address", "usb.bInterfaceClass") {
		b, _ := strconv.Atoi(r[0])
		d, _ := strconv.Atoi(r[1])
		info, _ := ids.Lookup(uint16(b), uint8(d))
		if info == nil || fmt.Sprintf("0x%02x", info.InterfaceClass(0)) != r[2] {
			t.Errorf("%d:%03d interface 0: iotap %+v, tshark class %s", b, d, info, r[2])
		}
	}
	// HID reports: decoded on the frames tshark decodes as HID data.
	var tsHID []uint64
	for _, r := range tshark(inj, "usbhid.data", "frame.number") {
		n, _ := strconv.ParseUint(r[0], 10, 64)
		tsHID = append(tsHID, n)
	}
	if len(hid) == 0 || !slices.Equal(hid, tsHID) || !keyA {
		t.Errorf("HID input decoded on frames %v (key a seen: %v); tshark decodes HID data on %v", hid, keyA, tsHID)
	}

	// Without injection: nothing known about the keyboard, no HID decoded,
	// and tshark agrees.
	ids, hid, _ = run(raw)
	if info, ok := ids.Lookup(2, 2); ok && info.HasID {
		t.Errorf("raw capture: keyboard identity %+v", info)
	}
	if n := len(tshark(raw, "usbhid.data", "frame.number")); len(hid) != 0 || n != 0 {
		t.Errorf("raw capture: iotap decoded HID on %v, tshark on %d frames", hid, n)
	}
}

// DescriptorPrelude selects the bus (the tree's device is on bus 1) and
// passes each unreadable device to warn.
func TestDescriptorPrelude(t *testing.T) {
	root := injTree(t, append(append([]byte{}, injDevice...), injConfig...))
	if evs := DescriptorPrelude(root, 0, nil)(); len(evs) != 6 {
		t.Errorf("all buses: %d events, want 6", len(evs))
	}
	if evs := DescriptorPrelude(root, 1, nil)(); len(evs) != 6 || evs[0].Bus != 1 {
		t.Errorf("bus 1: %d events", len(evs))
	}
	if evs := DescriptorPrelude(root, 2, nil)(); len(evs) != 0 {
		t.Errorf("bus 2: %d events, want none", len(evs))
	}
	var warned []error
	if evs := DescriptorPrelude(injTree(t, nil), 0, func(err error) { warned = append(warned, err) })(); len(evs) != 0 || len(warned) != 1 {
		t.Errorf("missing descriptors: %d events, warnings %v", len(evs), warned)
	}
}
