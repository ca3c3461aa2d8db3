package usb

import (
	"strconv"
	"sync"
)

var usagePageNames = sync.OnceValue(func() map[uint16]string {
	return map[uint16]string{
		0x01: "Generic Desktop", 0x02: "Simulation Controls", 0x03: "VR Controls", 0x04: "Sport Controls",
		0x05: "Game Controls", 0x06: "Generic Device Controls", 0x07: "Keyboard/Keypad", 0x08: "LED",
		0x09: "Button", 0x0a: "Ordinal", 0x0b: "Telephony", 0x0c: "Consumer", 0x0d: "Digitizer",
		0x0e: "Haptics", 0x0f: "Physical Input Device", 0x10: "Unicode", 0x12: "Eye and Head Trackers",
		0x14: "Auxiliary Display", 0x20: "Sensors", 0x40: "Medical Instrument", 0x41: "Braille Display",
		0x59: "Lighting and Illumination", 0x80: "Monitor", 0x81: "Monitor Enumerated", 0x82: "VESA Virtual Controls",
		0x84: "Power", 0x85: "Battery System", 0x8c: "Barcode Scanner", 0x8d: "Scales",
		0x8e: "Magnetic Stripe Reader", 0x90: "Camera Control", 0x91: "Arcade", 0xf1d0: "FIDO Alliance",
	}
})

var genericDesktopUsages = sync.OnceValue(func() map[uint16]string {
	return map[uint16]string{
		0x01: "Pointer", 0x02: "Mouse", 0x04: "Joystick", 0x05: "Game Pad", 0x06: "Keyboard", 0x07: "Keypad",
		0x08: "Multi-axis Controller", 0x09: "Tablet PC System Controls", 0x0e: "System Multi-Axis Controller",
		0x30: "X", 0x31: "Y", 0x32: "Z", 0x33: "Rx", 0x34: "Ry", 0x35: "Rz", 0x36: "Slider", 0x37: "Dial",
		0x38: "Wheel", 0x39: "Hat Switch", 0x3a: "Counted Buffer", 0x3b: "Byte Count", 0x3c: "Motion Wakeup",
		0x3d: "Start", 0x3e: "Select", 0x40: "Vx", 0x41: "Vy", 0x42: "Vz", 0x43: "Vbrx", 0x44: "Vbry", 0x45: "Vbrz",
		0x46: "Vno", 0x47: "Feature Notification", 0x48: "Resolution Multiplier",
		0x80: "System Control", 0x81: "System Power Down", 0x82: "System Sleep", 0x83: "System Wake Up",
		0x84: "System Context Menu", 0x85: "System Main Menu", 0x86: "System App Menu", 0x90: "D-pad Up",
		0x91: "D-pad Down", 0x92: "D-pad Right", 0x93: "D-pad Left",
	}
})

var consumerUsages = sync.OnceValue(func() map[uint16]string {
	return map[uint16]string{
		0x01: "Consumer Control", 0x02: "Numeric Key Pad", 0x03: "Programmable Buttons", 0x04: "Microphone",
		0x05: "Headphone", 0x06: "Graphic Equalizer", 0x30: "Power", 0x40: "Menu", 0x6f: "Display Brightness Increment",
		0x70: "Display Brightness Decrement", 0xb0: "Play", 0xb1: "Pause", 0xb2: "Record", 0xb3: "Fast Forward",
		0xb4: "Rewind", 0xb5: "Scan Next Track", 0xb6: "Scan Previous Track", 0xb7: "Stop", 0xb8: "Eject",
		0xcd: "Play/Pause", 0xe0: "Volume", 0xe2: "Mute", 0xe9: "Volume Increment", 0xea: "Volume Decrement",
		0x183: "AL Consumer Control Configuration", 0x18a: "AL Email Reader", 0x192: "AL Calculator",
		0x194: "AL Local Machine Browser", 0x221: "AC Search", 0x223: "AC Home", 0x224: "AC Back",
		0x225: "AC Forward", 0x226: "AC Stop", 0x227: "AC Refresh", 0x22a: "AC Bookmarks", 0x238: "AC Pan",
	}
})

var digitizerUsages = sync.OnceValue(func() map[uint16]string {
	return map[uint16]string{
		0x01: "Digitizer", 0x02: "Pen", 0x03: "Light Pen", 0x04: "Touch Screen", 0x05: "Touch Pad",
		0x06: "Whiteboard", 0x20: "Stylus", 0x21: "Puck", 0x22: "Finger", 0x30: "Tip Pressure",
		0x32: "In Range", 0x33: "Touch", 0x3c: "Invert", 0x42: "Tip Switch", 0x44: "Barrel Switch",
		0x45: "Eraser", 0x47: "Confidence", 0x48: "Width", 0x49: "Height", 0x51: "Contact Identifier",
		0x54: "Contact Count", 0x55: "Contact Count Maximum", 0x56: "Scan Time",
	}
})

var ledUsages = sync.OnceValue(func() map[uint16]string {
	return map[uint16]string{
		0x01: "Num Lock", 0x02: "Caps Lock", 0x03: "Scroll Lock", 0x04: "Compose", 0x05: "Kana",
		0x06: "Power", 0x07: "Shift", 0x08: "Do Not Disturb", 0x09: "Mute",
	}
})

// UsagePageName names a HID usage page; vendor pages (0xff00..0xffff) are
// "Vendor 0xffNN".
func UsagePageName(page uint16) string {
	if n, ok := usagePageNames()[page]; ok {
		return n
	}
	if page >= 0xff00 {
		return "Vendor 0x" + strconv.FormatUint(uint64(page), 16)
	}
	return "0x" + strconv.FormatUint(uint64(page), 16)
}

// UsageName names a usage on a page: named for the common pages, "Button N"
// for buttons, "Key 0xNN" for keyboard usages, hex otherwise.
func UsageName(page, id uint16) string {
	var m map[uint16]string
	switch page {
	case 0x01:
		m = genericDesktopUsages()
	case 0x08:
		m = ledUsages()
	case 0x0c:
		m = consumerUsages()
	case 0x0d:
		m = digitizerUsages()
	case 0x09:
		if id == 0 {
			return "No Buttons"
		}
		return "Button " + strconv.Itoa(int(id))
	case 0x0a:
		return "Instance " + strconv.Itoa(int(id))
	case 0x07:
		switch {
		case id >= 0x04 && id <= 0x1d:
			return "Key " + string(rune('a'+id-4))
		case id >= 0x1e && id <= 0x26:
			return "Key " + string(rune('1'+id-0x1e))
		case id == 0x27:
			return "Key 0"
		case id >= 0xe0 && id <= 0xe7:
			return [...]string{"Left Control", "Left Shift", "Left Alt", "Left GUI", "Right Control", "Right Shift", "Right Alt", "Right GUI"}[id-0xe0]
		}
		return "Key 0x" + strconv.FormatUint(uint64(id), 16)
	}
	if n, ok := m[id]; ok {
		return n
	}
	return "0x" + strconv.FormatUint(uint64(id), 16)
}
