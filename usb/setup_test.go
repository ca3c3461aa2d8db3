package usb

import (
	"encoding/hex"
	"errors"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Setup packets as usbmon prints them (bmRequestType bRequest wValue
// wIndex wLength), from the kernel's usbmon documentation, the public
// captures and the lab.
func TestSetupDescribe(t *testing.T) {
	tests := []struct {
		rt, req              uint8
		value, index, length uint16
		hint                 uint8
		want                 string
	}{
		// usbmon.txt example: hub port status.
		{0xa3, 0x00, 0x0000, 0x0003, 0x0004, 0, "GET_STATUS port=3 len=4"},
		{0x80, 0x06, 0x0100, 0x0000, 0x0012, 0, "GET_DESCRIPTOR DEVICE index=0 len=18"},
		{0x80, 0x06, 0x0200, 0x0000, 0x0009, 0, "GET_DESCRIPTOR CONFIGURATION index=0 len=9"},
		{0x80, 0x06, 0x0304, 0x0409, 0x00ff, 0, "GET_DESCRIPTOR STRING index=4 lang=0x0409 len=255"},
		{0x80, 0x06, 0x0300, 0x0000, 0x00ff, 0, "GET_DESCRIPTOR STRING index=0 len=255"},
		{0x80, 0x06, 0x0f00, 0x0000, 0x0005, 0, "GET_DESCRIPTOR BOS index=0 len=5"},
		{0x81, 0x06, 0x2200, 0x0000, 0x003f, 0, "GET_DESCRIPTOR REPORT index=0 interface=0 len=63"},
		{0x00, 0x05, 0x0002, 0x0000, 0x0000, 0, "SET_ADDRESS addr=2"},
		{0x00, 0x09, 0x0001, 0x0000, 0x0000, 0, "SET_CONFIGURATION config=1"},
		{0x80, 0x08, 0x0000, 0x0000, 0x0001, 0, "GET_CONFIGURATION len=1"},
		{0x80, 0x00, 0x0000, 0x0000, 0x0002, 0, "GET_STATUS device len=2"},
		{0x82, 0x00, 0x0000, 0x0081, 0x0002, 0, "GET_STATUS ep=0x81 len=2"},
		{0x02, 0x01, 0x0000, 0x0081, 0x0000, 0, "CLEAR_FEATURE ENDPOINT_HALT ep=0x81"},
		{0x00, 0x03, 0x0001, 0x0000, 0x0000, 0, "SET_FEATURE DEVICE_REMOTE_WAKEUP device"},
		{0x00, 0x03, 0x0002, 0x0400, 0x0000, 0, "SET_FEATURE TEST_MODE device test=4"},
		{0x00, 0x03, 0x0030, 0x0000, 0x0000, 0, "SET_FEATURE U1_ENABLE device"},
		{0x01, 0x03, 0x0000, 0x0100, 0x0000, 0, "SET_FEATURE FUNCTION_SUSPEND interface=0 options=1"},
		{0x81, 0x0a, 0x0000, 0x0001, 0x0001, 0, "GET_INTERFACE interface=1 len=1"},
		{0x01, 0x0b, 0x0001, 0x0002, 0x0000, 0, "SET_INTERFACE interface=2 alt=1"},
		{0x82, 0x0c, 0x0000, 0x0083, 0x0002, 0, "SYNCH_FRAME ep=0x83 len=2"},
		{0x00, 0x30, 0x0000, 0x0000, 0x0006, 0, "SET_SEL len=6"},
		{0x00, 0x31, 0x0028, 0x0000, 0x0000, 0, "SET_ISOCH_DELAY delay_ns=40"},
		{0x00, 0x07, 0x0301, 0x0409, 0x0010, 0, "SET_DESCRIPTOR STRING index=1 lang=0x0409 len=16"},
		// HID (usb-kbd in the lab).
		{0x21, 0x0a, 0x0000, 0x0000, 0x0000, ClassHID, "SET_IDLE duration_ms=0 id=0 interface=0"},
		{0x21, 0x0b, 0x0000, 0x0000, 0x0000, ClassHID, "SET_PROTOCOL boot interface=0"},
		{0x21, 0x09, 0x0200, 0x0000, 0x0001, ClassHID, "SET_REPORT output id=0 interface=0 len=1"},
		{0xa1, 0x01, 0x0301, 0x0001, 0x0040, ClassHID, "GET_REPORT feature id=1 interface=1 len=64"},
		// Mass storage.
		{0xa1, 0xfe, 0x0000, 0x0000, 0x0001, 0, "GET_MAX_LUN interface=0 len=1"},
		{0x21, 0xff, 0x0000, 0x0000, 0x0000, 0, "BULK_ONLY_MASS_STORAGE_RESET interface=0"},
		// CDC ACM.
		{0x21, 0x20, 0x0000, 0x0000, 0x0007, 0, "SET_LINE_CODING interface=0 len=7"},
		{0x21, 0x22, 0x0003, 0x0000, 0x0000, 0, "SET_CONTROL_LINE_STATE DTR=1 RTS=1 interface=0"},
		{0xa1, 0x21, 0x0000, 0x0002, 0x0007, ClassCDC, "GET_LINE_CODING interface=2 len=7"},
		{0x21, 0x23, 0xffff, 0x0000, 0x0000, ClassCDC, "SEND_BREAK duration=until-cleared interface=0"},
		// Hub.
		{0x23, 0x03, 0x0004, 0x0001, 0x0000, 0, "SET_FEATURE PORT_RESET port=1"},
		{0x23, 0x01, 0x0014, 0x0002, 0x0000, 0, "CLEAR_FEATURE C_PORT_RESET port=2"},
		{0x23, 0x03, 0x0008, 0x0003, 0x0000, 0, "SET_FEATURE PORT_POWER port=3"},
		{0xa0, 0x06, 0x2900, 0x0000, 0x000f, 0, "GET_DESCRIPTOR HUB index=0 len=15"},
		{0xa0, 0x00, 0x0000, 0x0000, 0x0004, 0, "GET_STATUS hub len=4"},
		{0x20, 0x0c, 0x0001, 0x0000, 0x0000, 0, "SET_HUB_DEPTH depth=1"},
		// Vendor.
		{0xc0, 0xa0, 0xe600, 0x0000, 0x0001, 0, "VENDOR_0xa0 value=0xe600 index=0x0000 len=1"},
	}
	for _, tt := range tests {
		s := Setup{tt.rt, tt.req, tt.value, tt.index, tt.length}
		b := s.Bytes()
		p, err := ParseSetup(b[:])
		if err != nil || p != s {
			t.Fatalf("round trip %x: %+v %v", b, p, err)
		}
		if got := p.Describe(tt.hint); got != tt.want {
			t.Errorf("%02x %02x %04x %04x %04x: got %q, want %q", tt.rt, tt.req, tt.value, tt.index, tt.length, got, tt.want)
		}
	}
}

func TestSetupFields(t *testing.T) {
	s, err := ParseSetup(mustHex(t, "a300000003000400"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.In() || s.Kind() != KindClass || s.Recipient() != RecipientOther || s.Index != 3 || s.Length != 4 {
		t.Errorf("fields %+v: in=%v kind=%v recipient=%v", s, s.In(), s.Kind(), s.Recipient())
	}
	_, err = ParseSetup([]byte{0x80, 6, 0})
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrShort) || fe.Offset != 3 {
		t.Errorf("short setup: %v", err)
	}
}

func TestSetupAppendNoAlloc(t *testing.T) {
	s := Setup{0x80, 6, 0x0304, 0x0409, 255}
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() { buf = s.AppendDescription(buf[:0], 0) })
	if n != 0 {
		t.Errorf("AppendDescription allocates %v times", n)
	}
}

func TestStatus(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int32
	}{{"-32", -32}, {"EPIPE", -32}, {"-EPIPE", -32}, {"stall", -32}, {"eproto", -71}, {"ENOENT", -2}, {"0", 0}} {
		got, ok := ParseStatus(tt.in)
		if !ok || got != tt.want {
			t.Errorf("ParseStatus(%q) = %d %v, want %d", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := ParseStatus("EWHAT"); ok {
		t.Error("EWHAT parsed")
	}
	if StatusName(-104) != "ECONNRESET" || StatusName(-108) != "ESHUTDOWN" || StatusName(-9999) != "-9999" {
		t.Error("StatusName")
	}
}
