package usb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// ctrl builds a control event on bus 1; setup gives the direction of
// both the submission and its completion, and is captured on submissions.
func ctrl(typ usbmon.EventType, id uint64, dev uint8, setup string, data []byte, us int64) *usbmon.Event {
	e := &usbmon.Event{ID: id, Type: typ, Transfer: usbmon.Control, Bus: 1, Device: dev, SetupFlag: usbmon.SetupNone,
		DataFlag: '<', Sec: 0, Usec: int32(us), Fields: usbmon.HasWallClock | usbmon.HasBus}
	if setup != "" {
		var s [8]byte
		for i := 0; i < 8; i++ {
			var b byte
			for _, c := range setup[2*i : 2*i+2] {
				b <<= 4
				switch {
				case c >= '0' && c <= '9':
					b |= byte(c - '0')
				default:
					b |= byte(c-'a') + 10
				}
			}
			s[i] = b
		}
		if typ == usbmon.Submission {
			e.Setup, e.SetupFlag = s, usbmon.SetupPresent
		}
		e.In = s[0]&0x80 != 0
	}
	if data != nil {
		e.Data, e.DataFlag, e.Length = data, usbmon.DataPresent, uint32(len(data))
	}
	return e
}

// feed runs events through a Pairer into ids and returns the pairer.
func feed(ids *Identities, evs ...*usbmon.Event) *Pairer {
	p := NewPairer()
	for _, e := range evs {
		if pr, ok := p.Add(e); ok {
			ids.Observe(pr, e)
		}
	}
	return p
}

func TestIdentitiesEnumeration(t *testing.T) {
	S, C := usbmon.Submission, usbmon.Callback
	dev := mustHex(t, km003cDevice)
	cfg := mustHex(t, km003cConfig)
	str := mustHex(t, "1e03"+"50004f00570045005200"+"2d005a002000"+"4b004d00300030003300430"+"0")
	ids := NewIdentities()
	// EHCI-style enumeration: descriptor at address 0, SET_ADDRESS, the
	// rest at the new address.
	feed(ids,
		ctrl(S, 0x10, 0, "8006000100004000", nil, 0), ctrl(C, 0x10, 0, "8006000100004000", dev[:8], 10),
		ctrl(S, 0x10, 0, "0005070000000000", nil, 20), ctrl(C, 0x10, 0, "0005070000000000", nil, 30),
		ctrl(S, 0x10, 7, "8006000100001200", nil, 40), ctrl(C, 0x10, 7, "8006000100001200", dev, 50),
		ctrl(S, 0x10, 7, "8006000200008200", nil, 60), ctrl(C, 0x10, 7, "8006000200008200", cfg, 70),
		ctrl(S, 0x10, 7, "8006040309040001", nil, 80), ctrl(C, 0x10, 7, "8006040309040001", str, 90),
	)
	d, ok := ids.Lookup(1, 7)
	if !ok || !d.HasID || d.Vendor != 0x5fc9 || d.Product != 0x0063 || d.ProductName != "POWER-Z KM003C" {
		t.Fatalf("%+v", d)
	}
	if d.InterfaceClass(3) != ClassHID || d.InterfaceClass(0) != ClassVendor || !d.HasInterfaceClass(ClassCDCData) {
		t.Errorf("interfaces %v", d.Interfaces)
	}
	if _, ok := ids.Lookup(1, 0); ok {
		t.Error("address 0 still known after SET_ADDRESS")
	}
	// Another device is given address 7: what was known is forgotten.
	other := append([]byte(nil), dev...)
	other[8], other[9] = 0x81, 0x07
	feed(ids,
		ctrl(S, 0x11, 0, "8006000100004000", nil, 100), ctrl(C, 0x11, 0, "8006000100004000", other[:8], 110),
		ctrl(S, 0x11, 0, "0005070000000000", nil, 120), ctrl(C, 0x11, 0, "0005070000000000", nil, 130),
	)
	if d, ok := ids.Lookup(1, 7); !ok || d.HasID || d.ProductName != "" {
		t.Errorf("address 7 after reuse: %+v", d)
	}
	// xHCI assigns addresses itself (no SET_ADDRESS on the wire): a new
	// VID:PID at a known address replaces the old identity.
	feed(ids, ctrl(S, 0x12, 7, "8006000100001200", nil, 140), ctrl(C, 0x12, 7, "8006000100001200", other, 150))
	if d, _ := ids.Lookup(1, 7); d.Vendor != 0x0781 || d.ProductName != "" {
		t.Errorf("after xHCI reuse: %+v", d)
	}
	// A failed SET_ADDRESS changes nothing.
	p := NewPairer()
	p.Add(ctrl(S, 0x13, 0, "0005090000000000", nil, 160))
	c := ctrl(C, 0x13, 0, "0005090000000000", nil, 170)
	c.Status = -71
	pr, _ := p.Add(c)
	ids.Observe(pr, c)
	if _, ok := ids.Lookup(1, 9); ok {
		t.Error("failed SET_ADDRESS moved a device")
	}
}

func TestLoadSysfs(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, kv map[string]string) {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for k, v := range kv {
			if err := os.WriteFile(filepath.Join(root, dir, k), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("usb1", map[string]string{"busnum": "1", "devnum": "1", "idVendor": "1d6b", "idProduct": "0002", "bDeviceClass": "09", "product": "EHCI Host Controller"})
	write("1-1", map[string]string{"busnum": "1", "devnum": "2", "idVendor": "0627", "idProduct": "0001", "bDeviceClass": "00",
		"manufacturer": "QEMU", "product": "QEMU USB Keyboard", "serial": "68284-0000:00:04.0-1"})
	write("1-1:1.0", map[string]string{"bInterfaceNumber": "00", "bInterfaceClass": "03"})
	write("1-2", map[string]string{"busnum": "1", "devnum": "x"}) // unreadable: skipped
	devs, err := LoadSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 {
		t.Fatalf("%d devices: %+v", len(devs), devs)
	}
	ids := NewIdentities()
	if err := ids.AddSysfs(root); err != nil {
		t.Fatal(err)
	}
	kbd, ok := ids.Lookup(1, 2)
	if !ok || kbd.Vendor != 0x0627 || kbd.ProductName != "QEMU USB Keyboard" || kbd.InterfaceClass(0) != ClassHID || kbd.Source != "sysfs" {
		t.Errorf("%+v", kbd)
	}
	if _, err := LoadSysfs(filepath.Join(root, "missing")); err == nil {
		t.Error("missing root: no error")
	}
	// The VID:PID filter works without any enumeration in the capture.
	f := DeviceIDIs(ids, 0x0627, 0x0001)
	if !f(&usbmon.Event{Bus: 1, Device: 2}) || f(&usbmon.Event{Bus: 1, Device: 1}) {
		t.Error("filter by sysfs identity")
	}
}

func TestFilters(t *testing.T) {
	a := ev(usbmon.Callback, 1, 3, 2, true, -32, 1000000)
	b := ev(usbmon.Submission, 1, 4, 1, false, -115, 3000000)
	b.Transfer = usbmon.Interrupt
	tests := []struct {
		name string
		f    Filter
		a, b bool
	}{
		{"nil", nil, true, true},
		{"bus", BusIs(1), true, true},
		{"dev", DeviceIs(4), false, true},
		{"ep", EndpointIs(2), true, false},
		{"type", TransferIs(usbmon.Interrupt), false, true},
		{"dir", DirectionIs(true), true, false},
		{"status", StatusIs(-32), true, false},
		{"status never matches a submission", StatusIs(-115), false, false},
		{"all", All(BusIs(1), DeviceIs(3)), true, false},
		{"any", Any(DeviceIs(3), EndpointIs(1)), true, true},
		{"not", Not(DeviceIs(3)), false, true},
		{"absolute time", TimeRange(2000000, 0, false), false, true},
		{"until", TimeRange(0, 2000000, false), true, false},
	}
	for _, tt := range tests {
		if got := tt.f.Match(a); got != tt.a {
			t.Errorf("%s: a %v", tt.name, got)
		}
		if got := tt.f.Match(b); got != tt.b {
			t.Errorf("%s: b %v", tt.name, got)
		}
	}
	rel := TimeRange(1500000, 0, true) // 1.5 s after the first event seen
	if rel(a) || !rel(b) {
		t.Error("relative time range")
	}
	if v, p, err := ParseVIDPID("0781:5583"); err != nil || v != 0x0781 || p != 0x5583 {
		t.Errorf("ParseVIDPID %x %x %v", v, p, err)
	}
	for _, bad := range []string{"0781", "0781:", "xyz:0001", "10000:1"} {
		if _, _, err := ParseVIDPID(bad); err == nil {
			t.Errorf("ParseVIDPID(%q) accepted", bad)
		}
	}
	for s, want := range map[string]usbmon.TransferType{"ctrl": usbmon.Control, "bulk": usbmon.Bulk, "intr": usbmon.Interrupt, "iso": usbmon.Isochronous} {
		if got, err := ParseTransferType(s); err != nil || got != want {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ParseTransferType("usb"); err == nil {
		t.Error("bad type accepted")
	}
}

// TestLearning: a DeviceIDIs filter behind Learning matches a device from
// the completion of its device descriptor on (not before), and never
// another device.
func TestLearning(t *testing.T) {
	S, C := usbmon.Submission, usbmon.Callback
	dev := mustHex(t, km003cDevice)
	ids := NewIdentities()
	f := Learning(DeviceIDIs(ids, 0x5fc9, 0x0063), ids)
	for i, tc := range []struct {
		ev   *usbmon.Event
		want bool
	}{
		{ctrl(S, 0x10, 7, "8006000100001200", nil, 40), false}, // identity not known yet
		{ctrl(C, 0x10, 7, "8006000100001200", dev, 50), true},  // learnt from this very event
		{ctrl(S, 0x11, 7, "8006000200000900", nil, 60), true},
		{ctrl(S, 0x12, 8, "8006000200000900", nil, 70), false}, // another address
	} {
		if got := f(tc.ev); got != tc.want {
			t.Errorf("event %d: %v, want %v", i, got, tc.want)
		}
	}
}
