package usb

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Descriptors of a ChargerLab POWER-Z KM003C, read from
// ../shared/testdata/usb/km003c-adc-1000hz.pcapng (MIT/Apache-2.0), frames
// 2 and 6; tshark decodes them the same (see TestTsharkOracle).
const (
	km003cDevice = "12011002ef020120c95f6300000101040301"
	km003cConfig = "0902820004010080320904000002ff0000020705010240000007058102400000080b010202020000090401000102020002052400100105240100020424020205240601020705830308000a09040200020a00000007050202400000070582024000000904030002030000000921110100012218000705850340000107050503400001"
)

func TestDeviceDescriptor(t *testing.T) {
	d, err := ParseDeviceDescriptor(mustHex(t, km003cDevice))
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceDescriptor{USB: 0x0210, Class: ClassMisc, SubClass: 2, Protocol: 1, MaxPacketSize0: 32, Vendor: 0x5fc9,
		Product: 0x0063, Device: 0x0100, ManufacturerIndex: 1, ProductIndex: 4, SerialIndex: 3, NumConfigurations: 1, Len: 18}
	if d != want {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
	if s := d.String(); s != "DEVICE usb=2.10 class=misc/2/1 maxpacket0=32 id=5fc9:0063 rev=1.00 strings=1/4/3 configs=1" {
		t.Errorf("String: %q", s)
	}
	// The first read of an enumeration asks for 8 bytes.
	d, err = ParseDeviceDescriptor(mustHex(t, km003cDevice)[:8])
	if !errors.Is(err, ErrShort) || d.MaxPacketSize0 != 32 || d.Len != 8 || d.Vendor != 0 {
		t.Errorf("8-byte read: %+v %v", d, err)
	}
	if _, err := ParseDeviceDescriptor(mustHex(t, "1202")); !errors.Is(err, ErrInvalid) {
		t.Errorf("wrong type: %v", err)
	}
}

func TestConfiguration(t *testing.T) {
	b := mustHex(t, km003cConfig)
	c, err := ParseConfiguration(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.TotalLength != 130 || c.Len != 130 || c.NumInterface != 4 || c.Value != 1 || c.MaxPower != 0x32 || c.Attributes != 0x80 {
		t.Errorf("header %+v", c)
	}
	var got []string
	for _, i := range c.Interfaces {
		s := ClassName(i.Class)
		for _, e := range i.Endpoints {
			s += " " + e.String()
		}
		for _, x := range i.Extra {
			s += " [" + x.String() + "]"
		}
		got = append(got, s)
	}
	want := []string{
		"vendor ENDPOINT 0x01 out bulk maxpacket=64 interval=0 ENDPOINT 0x81 in bulk maxpacket=64 interval=0",
		"cdc ENDPOINT 0x83 in interrupt maxpacket=8 interval=10 [CDC HEADER version=1.10] [CDC CALL_MANAGEMENT capabilities=0x00 data_interface=2] [CDC ACM capabilities=0x02] [CDC UNION control=1 subordinates=[2]]",
		"cdc-data ENDPOINT 0x02 out bulk maxpacket=64 interval=0 ENDPOINT 0x82 in bulk maxpacket=64 interval=0",
		"hid ENDPOINT 0x85 in interrupt maxpacket=64 interval=1 ENDPOINT 0x05 out interrupt maxpacket=64 interval=1 [HID hid=1.11 country=0 REPORT(24)]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("interfaces:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(c.Associations) != 1 || c.Associations[0] != (InterfaceAssociation{FirstInterface: 1, InterfaceCount: 2, Class: 2, SubClass: 2, Protocol: 0}) {
		t.Errorf("IAD %+v", c.Associations)
	}
	hid := c.Interfaces[3].Extra[0].(HIDDescriptor)
	if hid.ReportDescriptorLength() != 24 {
		t.Errorf("report length %d", hid.ReportDescriptorLength())
	}
	if !strings.Contains(c.Tree(), "    CDC UNION control=1 subordinates=[2]\n") {
		t.Errorf("tree:\n%s", c.Tree())
	}

	// The 9-byte first read decodes the header only.
	c, err = ParseConfiguration(b[:9])
	if err != nil || c.Len != 9 || c.TotalLength != 130 || len(c.Interfaces) != 0 {
		t.Errorf("9-byte read: %+v %v", c, err)
	}
	// usbmon text keeps 32 bytes: the cut descriptor is reported with
	// its offset, what precedes it is kept.
	// 9 + 9 + 7 + 7 = 32: the cut falls between descriptors.
	c, err = ParseConfiguration(b[:32])
	if err != nil || len(c.Interfaces) != 1 || len(c.Interfaces[0].Endpoints) != 2 || c.Len != 32 {
		t.Errorf("32-byte capture: %+v %v", c, err)
	}
	var fe *FormatError
	c, err = ParseConfiguration(b[:30])
	if !errors.As(err, &fe) || fe.Offset != 30 || len(c.Interfaces[0].Endpoints) != 1 {
		t.Errorf("30-byte capture: %v %+v", err, c)
	}
	// A zero bLength inside would loop forever if not caught.
	bad := append([]byte(nil), b...)
	bad[9] = 0
	if _, err := ParseConfiguration(bad); !errors.As(err, &fe) || fe.Offset != 9 || !errors.Is(err, ErrInvalid) {
		t.Errorf("zero bLength: %v", err)
	}
}

func TestStringDescriptor(t *testing.T) {
	s, err := ParseStringDescriptor(mustHex(t, "16034300680061007200670065007200"+"4c0061006200"), false)
	if err != nil || s.Text != "ChargerLab" {
		t.Errorf("%q %v", s.Text, err)
	}
	l, err := ParseStringDescriptor(mustHex(t, "04030904"), true)
	if err != nil || !reflect.DeepEqual(l.LangIDs, []uint16{0x0409}) || l.String() != "STRING langids=0x0409" {
		t.Errorf("%+v %v", l, err)
	}
	// Cut by the capture: decoded as far as it goes.
	s, err = ParseStringDescriptor(mustHex(t, "1603430068006100"), false)
	if !errors.Is(err, ErrShort) || s.Text != "Cha" {
		t.Errorf("%q %v", s.Text, err)
	}
	// Non-BMP text survives the UTF-16 decoding.
	s, _ = ParseStringDescriptor(mustHex(t, "0803"+"3dd8a9dc"+"4100"), false)
	if s.Text != "\U0001f4a9A" {
		t.Errorf("%q", s.Text)
	}
}

func TestBOS(t *testing.T) {
	// A USB 3 flash drive's BOS: USB 2.0 extension + SuperSpeed USB.
	b := mustHex(t, "050f160002"+"07100202000000"+"0a1003000e00010aff07")
	d, err := ParseBOS(b)
	if err != nil {
		t.Fatal(err)
	}
	if d.TotalLength != 22 || d.NumCaps != 2 || len(d.Capabilities) != 2 {
		t.Fatalf("%+v", d)
	}
	want := "BOS total=22 caps=2; USB_2.0_EXTENSION attributes=0x00000002 lpm=true; SUPERSPEED_USB attributes=0x00 speeds=0x000e functionality=1 u1_exit=10us u2_exit=2047us"
	if d.String() != want {
		t.Errorf("got  %s\nwant %s", d, want)
	}
	if h, err := ParseBOS(b[:5]); err != nil || h.Len != 5 || len(h.Capabilities) != 0 {
		t.Errorf("header read: %+v %v", h, err)
	}
}

func TestHubDescriptor(t *testing.T) {
	// QEMU's usb-hub style USB 2 hub: 8 ports, per-port power.
	h, err := ParseHubDescriptor(mustHex(t, "0a2908090032640000ff"))
	if err != nil {
		t.Fatal(err)
	}
	if h.NumPorts != 8 || h.PowerOnToGood != 0x32 || len(h.Removable) != 2 || h.SuperSpeed {
		t.Errorf("%+v", h)
	}
	if !strings.HasPrefix(h.String(), "HUB ports=8 power=per-port overcurrent=per-port compound=false power_good=100ms") {
		t.Errorf("%s", h)
	}
	ss, err := ParseHubDescriptor(mustHex(t, "0c2a0409000a00000a000000"))
	if err != nil || !ss.SuperSpeed || ss.NumPorts != 4 || ss.Delay != 10 {
		t.Errorf("%+v %v", ss, err)
	}
	if _, err := ParseHubDescriptor(mustHex(t, "072908090032640000")); !errors.Is(err, ErrInvalid) {
		t.Errorf("bLength too small for the port bitmap: %v", err)
	}
}

func TestEndpointCompanionAndIsoc(t *testing.T) {
	// A SuperSpeed bulk endpoint with its companion inside an interface.
	b := mustHex(t, "09022c000101008032"+"090400000208065000"+"07058102000400"+"06300f000000"+"07050202000400"+"06300f000000")
	c, err := ParseConfiguration(b[:int(b[2])])
	if err != nil {
		t.Fatal(err)
	}
	e := c.Interfaces[0].Endpoints[0]
	if e.Companion == nil || e.Companion.MaxBurst != 15 || e.MaxPacketSize != 1024 {
		t.Errorf("%+v", e)
	}
	// Audio class 1 isochronous endpoint: 9 bytes with bRefresh and bSynchAddress.
	iso, err := ParseEndpointDescriptor(mustHex(t, "090501092000010000"))
	if err != nil || iso.TransferType() != "isochronous" || !strings.Contains(iso.String(), "sync=adaptive usage=data") {
		t.Errorf("%+v %v %s", iso, err, iso)
	}
}

func TestLineCoding(t *testing.T) {
	l, err := ParseLineCoding(mustHex(t, "00c20100000008"))
	if err != nil || l.String() != "115200 8N1" {
		t.Errorf("%v %v", l, err)
	}
	if _, err := ParseLineCoding(mustHex(t, "00c20100000908")); !errors.Is(err, ErrInvalid) {
		t.Errorf("parity 9: %v", err)
	}
}

func TestCDCNotification(t *testing.T) {
	tests := []struct{ hex, want string }{
		{"a1200000000002000300", "SERIAL_STATE DCD|DSR interface=0"},
		{"a120000001000200" + "0000", "SERIAL_STATE 0 interface=1"},
		{"a100010000000000", "NETWORK_CONNECTION connected interface=0"},
		{"a12a000000000800" + "00e1f50500e1f505", "CONNECTION_SPEED_CHANGE down=100000000 up=100000000 interface=0"},
	}
	for _, tt := range tests {
		n, err := ParseCDCNotification(mustHex(t, tt.hex))
		if err != nil || n.String() != tt.want {
			t.Errorf("%s: %q %v, want %q", tt.hex, n, err, tt.want)
		}
	}
	if _, err := ParseCDCNotification(mustHex(t, "a120000000000200")); !errors.Is(err, ErrShort) {
		t.Errorf("missing data: %v", err)
	}
	if _, err := ParseCDCNotification(mustHex(t, "2120000000000000")); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad request type: %v", err)
	}
}
