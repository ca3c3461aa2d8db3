package usb

import (
	"errors"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

func bulk(typ usbmon.EventType, in bool, data []byte, length uint32) *usbmon.Event {
	e := &usbmon.Event{ID: 7, Type: typ, Transfer: usbmon.Bulk, Bus: 2, Device: 3, Endpoint: 1, In: in, Length: length,
		SetupFlag: usbmon.SetupNone, DataFlag: '<', Fields: usbmon.HasWallClock | usbmon.HasBus}
	if in {
		e.Endpoint = 2
	}
	if data != nil {
		e.Data, e.DataFlag = data, usbmon.DataPresent
	}
	return e
}

func TestDecoderMassStorage(t *testing.T) {
	inq := append(mustHex(t, "0000050212000000"), []byte("QEMU    QEMU HARDDISK   2.5+")...)
	S, C := usbmon.Submission, usbmon.Callback
	stream := []struct {
		ev   *usbmon.Event
		want string
	}{
		{bulk(S, false, mustHex(t, "55534243"+"01000000"+"24000000"+"800006"+"120000002400"+"00000000000000000000"), 31), "CBW tag=0x1 lun=0 in 36: INQUIRY alloc=36"},
		{bulk(C, false, nil, 31), ""},
		{bulk(S, true, nil, 36), ""},
		{bulk(C, true, inq, 36), `INQUIRY data: disk vendor="QEMU" product="QEMU HARDDISK" rev="2.5+"`},
		{bulk(S, true, nil, 13), ""},
		{bulk(C, true, mustHex(t, "555342530100000000000000"+"00"), 13), "CSW tag=0x1 passed residue=0"},
		{bulk(S, false, mustHex(t, "55534243"+"02000000"+"08000000"+"80000a"+"25"+"000000000000000000000000000000"), 31), "CBW tag=0x2 lun=0 in 8: READ_CAPACITY_10"},
		{bulk(C, true, mustHex(t, "0001ffff00000200"), 8), "CAPACITY blocks=131072 block_size=512 bytes=67108864"},
		// A second IN data stage for the same command is payload, not a
		// response to decode again.
		{bulk(C, true, mustHex(t, "0001ffff00000200"), 8), ""},
	}
	d := NewDecoder(nil)
	p := NewPairer()
	for i, s := range stream {
		pr, ok := p.Add(s.ev)
		got := d.Decode(s.ev, pr, ok)
		if got.Summary != s.want {
			t.Errorf("event %d: %q, want %q", i, got.Summary, s.want)
		}
	}
}

func TestDecoderControl(t *testing.T) {
	S, C := usbmon.Submission, usbmon.Callback
	ids := NewIdentities()
	d := NewDecoder(ids)
	p := NewPairer()
	run := func(evs ...*usbmon.Event) Decoded {
		var out Decoded
		for _, e := range evs {
			pr, ok := p.Add(e)
			if ok {
				ids.Observe(pr, e)
			}
			out = d.Decode(e, pr, ok)
		}
		return out
	}
	// The first 8 bytes of the device descriptor, as asked: no error.
	got := run(ctrl(S, 1, 5, "8006000100000800", nil, 0), ctrl(C, 1, 5, "8006000100000800", mustHex(t, km003cDevice)[:8], 5))
	if got.Err != nil || got.Summary != "DEVICE usb=2.10 class=misc/2/1 maxpacket0=32 (8 of 18 bytes)" {
		t.Errorf("%q %v", got.Summary, got.Err)
	}
	// A configuration cut by usbmon text's 32-byte limit is reported.
	c := ctrl(C, 1, 5, "8006000200008200", mustHex(t, km003cConfig)[:30], 5)
	c.Length = 130
	got = run(ctrl(S, 1, 5, "8006000200008200", nil, 0), c)
	if got.Err == nil || !errors.Is(got.Err, ErrShort) {
		t.Errorf("cut configuration: %v", got.Err)
	}
	run(ctrl(S, 1, 5, "8006000200008200", nil, 0), ctrl(C, 1, 5, "8006000200008200", mustHex(t, km003cConfig), 5))
	// Interface 1 is CDC, so request 0x20 to it is SET_LINE_CODING and
	// its data is decoded.
	s := ctrl(S, 2, 5, "2120000001000700", mustHex(t, "80250000000008"), 0)
	s.In = false
	got = run(s)
	if got.Summary != "SET_LINE_CODING interface=1 len=7: 9600 8N1" {
		t.Errorf("%q", got.Summary)
	}
	// Interface 3 is HID: request 0x0a is SET_IDLE.
	got = run(ctrl(S, 3, 5, "210a000003000000", nil, 0))
	if got.Summary != "SET_IDLE duration_ms=0 id=0 interface=3" {
		t.Errorf("%q", got.Summary)
	}
	// Endpoint 0x83 belongs to the CDC interface: its interrupt data are
	// notifications.
	n := &usbmon.Event{ID: 9, Type: C, Transfer: usbmon.Interrupt, Bus: 1, Device: 5, Endpoint: 3, In: true,
		Data: mustHex(t, "a1200000010002000300"), Length: 10, Fields: usbmon.HasWallClock | usbmon.HasBus}
	if got := run(n); got.Summary != "SERIAL_STATE DCD|DSR interface=1" {
		t.Errorf("CDC notification: %q %v", got.Summary, got.Err)
	}
	// HID report descriptor response.
	got = run(ctrl(S, 4, 5, "8106002203004000", nil, 0), ctrl(C, 4, 5, "8106002203004000", mustHex(t, bootKeyboard), 5))
	if got.Summary != "REPORT items=32 apps=Keyboard input=8B output=1B" || got.Err != nil {
		t.Errorf("%q %v", got.Summary, got.Err)
	}
}

// TestDecoderLabCapture decodes the capture TestLabDecode recorded: the
// replugged keyboard's report descriptor is learned from its enumeration
// and its interrupt reports are then decoded key by key.
func TestDecoderLabCapture(t *testing.T) {
	evs := readAll(t, "testdata/lab-decode.pcapng")
	ids := NewIdentities()
	d := NewDecoder(ids)
	p := NewPairer()
	var hid []string
	for _, e := range evs {
		pr, ok := p.Add(e)
		if ok {
			ids.Observe(pr, e)
		}
		if x := d.Decode(e, pr, ok); strings.HasPrefix(x.Summary, "HID ") {
			if x.Err != nil {
				t.Errorf("%s: %v", x.Summary, x.Err)
			}
			hid = append(hid, x.Summary)
		}
	}
	want := "HID input: Left Shift keys=[Key b]"
	found := false
	for _, h := range hid {
		found = found || h == want
	}
	if !found {
		t.Errorf("no %q among %q", want, hid)
	}
}
