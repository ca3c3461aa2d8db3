package usb

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The boot keyboard report descriptor of HID 1.11 appendix E.6, as QEMU's
// usb-kbd (the lab keyboard) returns it.
const bootKeyboard = "05010906a101050719e029e71500250175019508810295017508810195057501050819012905910295017503910195067508150025ff0507190029ff8100c0"

func TestReportDescriptorKeyboard(t *testing.T) {
	rd, err := ParseReportDescriptor(mustHex(t, bootKeyboard))
	if err != nil {
		t.Fatal(err)
	}
	want := []HIDReport{{Kind: "input", ID: 0, Bits: 64}, {Kind: "output", ID: 0, Bits: 8}}
	if !reflect.DeepEqual(rd.Reports, want) {
		t.Errorf("reports %+v, want %+v", rd.Reports, want)
	}
	if len(rd.Items) != 32 {
		t.Errorf("%d items, want 32", len(rd.Items))
	}
	lines := strings.Split(rd.String(), "\n")
	for i, w := range map[int]string{
		0:  "Usage Page (Generic Desktop)",
		1:  "Usage (Keyboard)",
		2:  "Collection (Application)",
		3:  "  Usage Page (Keyboard/Keypad)",
		4:  "  Usage Minimum (Left Control)",
		10: "  Input (Data,Var,Abs)",
		13: "  Input (Const,Array,Abs)",
		19: "  Output (Data,Var,Abs)",
		26: "  Logical Maximum (-1)",
		30: "  Input (Data,Array,Abs)",
		31: "End Collection",
		32: "report input id=0: 64 bits (8 bytes)",
	} {
		if lines[i] != w {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
	if s := rd.Summary(); s != "REPORT items=32 apps=Keyboard input=8B output=1B" {
		t.Errorf("summary %q", s)
	}
}

func TestReportDescriptorIDsPushPop(t *testing.T) {
	// Two report IDs, a push/pop pair and a 4-byte extended usage.
	b := mustHex(t, "05010902a1018501050919012903150025017501950381029505810"+"1"+
		"a4"+"050109300931158125"+"7f750895028106"+"b4"+"c0"+
		"0b01000c00a10185027501950181029507810"+"1"+"c0")
	rd, err := ParseReportDescriptor(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []HIDReport{{Kind: "input", ID: 1, Bits: 24}, {Kind: "input", ID: 2, Bits: 8}}
	if !reflect.DeepEqual(rd.Reports, want) {
		t.Errorf("reports %+v, want %+v", rd.Reports, want)
	}
	if rd.Reports[0].Bytes() != 4 {
		t.Errorf("report 1 bytes %d", rd.Reports[0].Bytes())
	}
	if !strings.Contains(rd.String(), "Usage (Consumer: Consumer Control)") {
		t.Errorf("extended usage:\n%s", rd)
	}
	if !strings.Contains(rd.Summary(), "apps=Mouse,Consumer Control") {
		t.Errorf("summary %q", rd.Summary())
	}
}

func TestReportDescriptorErrors(t *testing.T) {
	tests := []struct {
		name string
		hex  string
		off  int
		is   error
	}{
		{"truncated item", "050109", 3, ErrShort},
		{"truncated 4-byte item", "0701", 2, ErrShort},
		{"end without collection", "0501c0", 2, ErrInvalid},
		{"pop without push", "0501b4", 2, ErrInvalid},
		{"unclosed collection", "a101", 2, ErrInvalid},
		{"report id 0", "8500", 0, ErrInvalid},
		{"long item cut", "fe05", 2, ErrShort},
	}
	for _, tt := range tests {
		_, err := ParseReportDescriptor(mustHex(t, tt.hex))
		var fe *FormatError
		if !errors.As(err, &fe) || !errors.Is(err, tt.is) || fe.Offset != tt.off {
			t.Errorf("%s: %v (want %v at %d)", tt.name, err, tt.is, tt.off)
		}
	}
	// A long item is skipped whole.
	rd, err := ParseReportDescriptor(mustHex(t, "fe0210aabb0501"))
	if err != nil || len(rd.Items) != 2 || rd.Items[0].Type != HIDLong || rd.Items[1].Offset != 5 {
		t.Errorf("long item: %+v %v", rd.Items, err)
	}
}

func TestDecodeReport(t *testing.T) {
	kbd, err := ParseReportDescriptor(mustHex(t, bootKeyboard))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		hex, want string
	}{
		// QEMU usb-kbd reports of "sendkey shift-b" (lab capture).
		{"0200050000000000", "Left Shift keys=[Key b]"},
		{"0200000000000000", "Left Shift"},
		{"0000000000000000", "(none)"},
		{"0000040000000000", "keys=[Key a]"},
		{"0000010101010101", "keys=[ErrorRollOver,ErrorRollOver,ErrorRollOver,ErrorRollOver,ErrorRollOver,ErrorRollOver]"},
	}
	for _, tt := range tests {
		got, err := kbd.DecodeReport("input", mustHex(t, tt.hex))
		if err != nil || got != tt.want {
			t.Errorf("%s: %q %v, want %q", tt.hex, got, err, tt.want)
		}
	}
	if got, err := kbd.DecodeReport("output", []byte{0x02}); err != nil || got != "Caps Lock" {
		t.Errorf("LED report: %q %v", got, err)
	}
	if _, err := kbd.DecodeReport("input", mustHex(t, "0200")); !errors.Is(err, ErrShort) {
		t.Errorf("short report: %v", err)
	}
	mouse, err := ParseReportDescriptor(mustHex(t, "05010902a1018501050919012903150025017501950381029505810"+"1"+
		"a4"+"050109300931158125"+"7f750895028106"+"b4"+"c0"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := mouse.DecodeReport("input", mustHex(t, "0105fe03"))
	if err != nil || got != "id=1 Button 1 Button 3 X=-2 Y=3" {
		t.Errorf("mouse: %q %v", got, err)
	}
	if _, err := mouse.DecodeReport("input", mustHex(t, "0700")); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown id: %v", err)
	}
}
