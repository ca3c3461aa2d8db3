package usb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// LiveFilter: --vidpid finds the device present in sysfs, --dev keeps an
// address, both keep only what both keep, neither keeps everything (nil);
// a bad VID:PID and a missing sysfs are errors.
func TestLiveFilter(t *testing.T) {
	root := t.TempDir()
	for dir, kv := range map[string]map[string]string{
		"usb1": {"busnum": "1", "devnum": "1", "idVendor": "1d6b", "idProduct": "0002"},
		"1-1":  {"busnum": "1", "devnum": "2", "idVendor": "0627", "idProduct": "0001"},
	} {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
		for k, v := range kv {
			os.WriteFile(filepath.Join(root, dir, k), []byte(v+"\n"), 0o644)
		}
	}
	kbd, hub := &usbmon.Event{Bus: 1, Device: 2}, &usbmon.Event{Bus: 1, Device: 1}
	for _, tc := range []struct {
		vidpid   string
		dev      uint8
		kbd, hub bool
	}{
		{"0627:0001", 0, true, false},
		{"", 1, false, true},
		{"0627:0001", 1, false, false},
		{"1d6b:0002", 1, false, true},
	} {
		f, err := LiveFilter(root, tc.vidpid, tc.dev)
		if err != nil {
			t.Fatal(err)
		}
		if f.Match(kbd) != tc.kbd || f.Match(hub) != tc.hub {
			t.Errorf("%q dev %d: keyboard %v, hub %v; want %v, %v", tc.vidpid, tc.dev, f.Match(kbd), f.Match(hub), tc.kbd, tc.hub)
		}
	}
	if f, err := LiveFilter(root, "", 0); f != nil || err != nil {
		t.Errorf("no selection: %v, %v", f, err)
	}
	if _, err := LiveFilter(root, "0627", 0); err == nil {
		t.Error("bad VID:PID accepted")
	}
	if _, err := LiveFilter(filepath.Join(root, "missing"), "0627:0001", 0); err == nil {
		t.Error("missing sysfs accepted")
	}
}
