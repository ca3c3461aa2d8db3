package usb

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
)

// Descriptor types (bDescriptorType).
const (
	DescDevice                  = 0x01
	DescConfiguration           = 0x02
	DescString                  = 0x03
	DescInterface               = 0x04
	DescEndpoint                = 0x05
	DescDeviceQualifier         = 0x06
	DescOtherSpeedConfiguration = 0x07
	DescInterfacePower          = 0x08
	DescOTG                     = 0x09
	DescDebug                   = 0x0a
	DescInterfaceAssociation    = 0x0b
	DescBOS                     = 0x0f
	DescDeviceCapability        = 0x10
	DescHID                     = 0x21
	DescReport                  = 0x22
	DescPhysical                = 0x23
	DescCSInterface             = 0x24
	DescCSEndpoint              = 0x25
	DescHub                     = 0x29
	DescSSHub                   = 0x2a
	DescSSEndpointCompanion     = 0x30
	DescSSPIsocEndpointComp     = 0x31
)

var descNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		DescDevice: "DEVICE", DescConfiguration: "CONFIGURATION", DescString: "STRING", DescInterface: "INTERFACE",
		DescEndpoint: "ENDPOINT", DescDeviceQualifier: "DEVICE_QUALIFIER", DescOtherSpeedConfiguration: "OTHER_SPEED_CONFIGURATION",
		DescInterfacePower: "INTERFACE_POWER", DescOTG: "OTG", DescDebug: "DEBUG", DescInterfaceAssociation: "INTERFACE_ASSOCIATION",
		DescBOS: "BOS", DescDeviceCapability: "DEVICE_CAPABILITY", DescHID: "HID", DescReport: "REPORT", DescPhysical: "PHYSICAL",
		DescCSInterface: "CS_INTERFACE", DescCSEndpoint: "CS_ENDPOINT", DescHub: "HUB", DescSSHub: "SS_HUB",
		DescSSEndpointCompanion: "SS_ENDPOINT_COMPANION", DescSSPIsocEndpointComp: "SSP_ISOC_ENDPOINT_COMPANION",
	}
})

// DescriptorTypeName names a descriptor type, "TYPE_0xNN" when unknown.
func DescriptorTypeName(t uint8) string {
	if n, ok := descNames()[t]; ok {
		return n
	}
	return "TYPE_0x" + hex2(t)
}

// BCD is a binary-coded-decimal version such as bcdUSB (0x0210 = 2.10).
type BCD uint16

func (v BCD) String() string {
	return strconv.FormatUint(uint64(v>>8), 16) + "." + hex2(uint8(v))
}

// MarshalText prints the version as "2.10".
func (v BCD) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// Descriptor is any decoded descriptor.
type Descriptor interface {
	Type() uint8
	String() string
}

// RawDescriptor is a descriptor this package does not decode further.
type RawDescriptor struct {
	DescriptorType uint8
	Data           []byte // the whole descriptor, bLength bytes
}

// Type returns bDescriptorType.
func (d RawDescriptor) Type() uint8 { return d.DescriptorType }
func (d RawDescriptor) String() string {
	return fmt.Sprintf("%s len=%d % x", DescriptorTypeName(d.DescriptorType), len(d.Data), d.Data)
}

// header checks the common bLength/bDescriptorType header of a descriptor
// of the given type and minimum length and returns the bytes of the
// descriptor (bLength long, or what is present when the input is short).
func header(what string, b []byte, typ uint8, min int) ([]byte, error) {
	if len(b) < 2 {
		return b, shortErr(what, len(b), 2, len(b))
	}
	if typ != 0 && b[1] != typ {
		return b, invalidErr(what, 1, "bDescriptorType 0x%02x, want 0x%02x", b[1], typ)
	}
	n := int(b[0])
	if n < min {
		return b, invalidErr(what, 0, "bLength %d below minimum %d", n, min)
	}
	if len(b) < n {
		return b, shortErr(what, len(b), n, len(b))
	}
	return b[:n], nil
}

// DeviceDescriptor is the 18-byte standard device descriptor.
type DeviceDescriptor struct {
	USB               BCD    `json:"bcdUSB"`
	Class             uint8  `json:"bDeviceClass"`
	SubClass          uint8  `json:"bDeviceSubClass"`
	Protocol          uint8  `json:"bDeviceProtocol"`
	MaxPacketSize0    uint8  `json:"bMaxPacketSize0"`
	Vendor            uint16 `json:"idVendor"`
	Product           uint16 `json:"idProduct"`
	Device            BCD    `json:"bcdDevice"`
	ManufacturerIndex uint8  `json:"iManufacturer"`
	ProductIndex      uint8  `json:"iProduct"`
	SerialIndex       uint8  `json:"iSerialNumber"`
	NumConfigurations uint8  `json:"bNumConfigurations"`
	// Len is how many of the 18 bytes were present (the first
	// GET_DESCRIPTOR of an enumeration often reads only 8).
	Len int `json:"length"`
}

// Type returns DescDevice.
func (DeviceDescriptor) Type() uint8 { return DescDevice }

// ParseDeviceDescriptor decodes a device descriptor. A descriptor cut short
// by the transfer length (8 bytes during enumeration, 32 in usbmon text) is
// returned with the fields present and an error wrapping ErrShort.
func ParseDeviceDescriptor(b []byte) (DeviceDescriptor, error) {
	const what = "device descriptor"
	var d DeviceDescriptor
	if len(b) >= 2 && b[1] != DescDevice {
		return d, invalidErr(what, 1, "bDescriptorType 0x%02x, want 0x%02x", b[1], DescDevice)
	}
	if len(b) >= 1 && b[0] < 18 {
		return d, invalidErr(what, 0, "bLength %d below minimum 18", b[0])
	}
	n := min(len(b), 18)
	d.Len = n
	if n >= 4 {
		d.USB = BCD(le16(b[2:]))
	}
	if n >= 8 {
		d.Class, d.SubClass, d.Protocol, d.MaxPacketSize0 = b[4], b[5], b[6], b[7]
	}
	if n >= 10 {
		d.Vendor = le16(b[8:])
	}
	if n >= 12 {
		d.Product = le16(b[10:])
	}
	if n >= 14 {
		d.Device = BCD(le16(b[12:]))
	}
	if n >= 18 {
		d.ManufacturerIndex, d.ProductIndex, d.SerialIndex, d.NumConfigurations = b[14], b[15], b[16], b[17]
		return d, nil
	}
	return d, shortErr(what, len(b), 18, len(b))
}

func (d DeviceDescriptor) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "DEVICE usb=%s", d.USB)
	if d.Len >= 8 {
		fmt.Fprintf(&s, " class=%s/%d/%d maxpacket0=%d", ClassName(d.Class), d.SubClass, d.Protocol, d.MaxPacketSize0)
	}
	if d.Len >= 12 {
		fmt.Fprintf(&s, " id=%04x:%04x", d.Vendor, d.Product)
	}
	if d.Len >= 18 {
		fmt.Fprintf(&s, " rev=%s strings=%d/%d/%d configs=%d", d.Device, d.ManufacturerIndex, d.ProductIndex, d.SerialIndex, d.NumConfigurations)
	} else {
		fmt.Fprintf(&s, " (%d of 18 bytes)", d.Len)
	}
	return s.String()
}

// DeviceQualifier is the device qualifier descriptor of a high-speed
// capable device.
type DeviceQualifier struct {
	USB               BCD   `json:"bcdUSB"`
	Class             uint8 `json:"bDeviceClass"`
	SubClass          uint8 `json:"bDeviceSubClass"`
	Protocol          uint8 `json:"bDeviceProtocol"`
	MaxPacketSize0    uint8 `json:"bMaxPacketSize0"`
	NumConfigurations uint8 `json:"bNumConfigurations"`
}

// Type returns DescDeviceQualifier.
func (DeviceQualifier) Type() uint8 { return DescDeviceQualifier }

// ParseDeviceQualifier decodes a device qualifier descriptor.
func ParseDeviceQualifier(b []byte) (DeviceQualifier, error) {
	b, err := header("device qualifier descriptor", b, DescDeviceQualifier, 10)
	if err != nil {
		return DeviceQualifier{}, err
	}
	return DeviceQualifier{USB: BCD(le16(b[2:])), Class: b[4], SubClass: b[5], Protocol: b[6], MaxPacketSize0: b[7], NumConfigurations: b[8]}, nil
}

func (d DeviceQualifier) String() string {
	return fmt.Sprintf("DEVICE_QUALIFIER usb=%s class=%s/%d/%d maxpacket0=%d configs=%d",
		d.USB, ClassName(d.Class), d.SubClass, d.Protocol, d.MaxPacketSize0, d.NumConfigurations)
}

// StringDescriptor is a string descriptor: the language list (index 0) or
// a UTF-16LE string.
type StringDescriptor struct {
	Text    string   `json:"text,omitempty"`
	LangIDs []uint16 `json:"langids,omitempty"`
}

// Type returns DescString.
func (StringDescriptor) Type() uint8 { return DescString }

// ParseStringDescriptor decodes a string descriptor; langs selects the
// index-0 form (a list of LANGIDs). A descriptor cut short by the capture
// is decoded as far as it goes and returned with an error wrapping ErrShort.
func ParseStringDescriptor(b []byte, langs bool) (StringDescriptor, error) {
	const what = "string descriptor"
	var d StringDescriptor
	if len(b) < 2 {
		return d, shortErr(what, len(b), 2, len(b))
	}
	if b[1] != DescString {
		return d, invalidErr(what, 1, "bDescriptorType 0x%02x, want 0x03", b[1])
	}
	n := int(b[0])
	if n < 2 {
		return d, invalidErr(what, 0, "bLength %d below minimum 2", n)
	}
	var err error
	if len(b) < n {
		err = shortErr(what, len(b), n, len(b))
		n = len(b)
	}
	body := b[2:n]
	u := make([]uint16, len(body)/2)
	for i := range u {
		u[i] = le16(body[2*i:])
	}
	if langs {
		d.LangIDs = u
	} else {
		d.Text = string(utf16.Decode(u))
	}
	return d, err
}

func (d StringDescriptor) String() string {
	if d.LangIDs != nil {
		var s strings.Builder
		s.WriteString("STRING langids=")
		for i, l := range d.LangIDs {
			if i > 0 {
				s.WriteByte(',')
			}
			fmt.Fprintf(&s, "0x%04x", l)
		}
		return s.String()
	}
	return "STRING " + strconv.Quote(d.Text)
}

// EndpointDescriptor is a standard endpoint descriptor (7 bytes, 9 for
// audio class 1 endpoints) with the descriptors that follow it.
type EndpointDescriptor struct {
	Address       uint8  `json:"bEndpointAddress"`
	Attributes    uint8  `json:"bmAttributes"`
	MaxPacketSize uint16 `json:"wMaxPacketSize"`
	Interval      uint8  `json:"bInterval"`
	Refresh       uint8  `json:"bRefresh,omitempty"`
	SynchAddress  uint8  `json:"bSynchAddress,omitempty"`
	// Companion is the SuperSpeed endpoint companion, when present.
	Companion *SSEndpointCompanion `json:"companion,omitempty"`
	// Extra holds the class-specific descriptors that follow.
	Extra []Descriptor `json:"extra,omitempty"`
}

// Type returns DescEndpoint.
func (EndpointDescriptor) Type() uint8 { return DescEndpoint }

// ParseEndpointDescriptor decodes one endpoint descriptor.
func ParseEndpointDescriptor(b []byte) (EndpointDescriptor, error) {
	b, err := header("endpoint descriptor", b, DescEndpoint, 7)
	if err != nil {
		return EndpointDescriptor{}, err
	}
	e := EndpointDescriptor{Address: b[2], Attributes: b[3], MaxPacketSize: le16(b[4:]), Interval: b[6]}
	if len(b) >= 9 {
		e.Refresh, e.SynchAddress = b[7], b[8]
	}
	return e, nil
}

// Number returns the endpoint number (0..15).
func (e EndpointDescriptor) Number() uint8 { return e.Address & 0x0f }

// In reports an IN (device-to-host) endpoint.
func (e EndpointDescriptor) In() bool { return e.Address&0x80 != 0 }

// TransferType returns "control", "isochronous", "bulk" or "interrupt".
func (e EndpointDescriptor) TransferType() string {
	return [...]string{"control", "isochronous", "bulk", "interrupt"}[e.Attributes&3]
}

func (e EndpointDescriptor) String() string {
	dir := "out"
	if e.In() {
		dir = "in"
	}
	s := fmt.Sprintf("ENDPOINT 0x%02x %s %s maxpacket=%d", e.Address, dir, e.TransferType(), e.MaxPacketSize&0x7ff)
	if mult := (e.MaxPacketSize >> 11) & 3; mult != 0 {
		s += fmt.Sprintf("x%d", mult+1)
	}
	if e.Attributes&3 == 1 {
		s += " sync=" + [...]string{"none", "async", "adaptive", "sync"}[(e.Attributes>>2)&3] +
			" usage=" + [...]string{"data", "feedback", "implicit-feedback", "reserved"}[(e.Attributes>>4)&3]
	}
	return s + fmt.Sprintf(" interval=%d", e.Interval)
}

// InterfaceDescriptor is one alternate setting of an interface with its
// endpoints and class-specific descriptors.
type InterfaceDescriptor struct {
	Number       uint8                `json:"bInterfaceNumber"`
	AltSetting   uint8                `json:"bAlternateSetting"`
	NumEndpoints uint8                `json:"bNumEndpoints"`
	Class        uint8                `json:"bInterfaceClass"`
	SubClass     uint8                `json:"bInterfaceSubClass"`
	Protocol     uint8                `json:"bInterfaceProtocol"`
	StringIndex  uint8                `json:"iInterface"`
	Endpoints    []EndpointDescriptor `json:"endpoints,omitempty"`
	// Extra holds class-specific descriptors between the interface
	// descriptor and its first endpoint (HID, CDC functional, ...).
	Extra []Descriptor `json:"extra,omitempty"`
}

// Type returns DescInterface.
func (InterfaceDescriptor) Type() uint8 { return DescInterface }

// ParseInterfaceDescriptor decodes one interface descriptor (without the
// descriptors that follow it; see ParseConfiguration).
func ParseInterfaceDescriptor(b []byte) (InterfaceDescriptor, error) {
	b, err := header("interface descriptor", b, DescInterface, 9)
	if err != nil {
		return InterfaceDescriptor{}, err
	}
	return InterfaceDescriptor{Number: b[2], AltSetting: b[3], NumEndpoints: b[4], Class: b[5], SubClass: b[6], Protocol: b[7], StringIndex: b[8]}, nil
}

func (d InterfaceDescriptor) String() string {
	return fmt.Sprintf("INTERFACE %d alt=%d class=%s/%d/%d endpoints=%d string=%d",
		d.Number, d.AltSetting, ClassName(d.Class), d.SubClass, d.Protocol, d.NumEndpoints, d.StringIndex)
}

// InterfaceAssociation is the interface association descriptor (IAD).
type InterfaceAssociation struct {
	FirstInterface uint8 `json:"bFirstInterface"`
	InterfaceCount uint8 `json:"bInterfaceCount"`
	Class          uint8 `json:"bFunctionClass"`
	SubClass       uint8 `json:"bFunctionSubClass"`
	Protocol       uint8 `json:"bFunctionProtocol"`
	StringIndex    uint8 `json:"iFunction"`
}

// Type returns DescInterfaceAssociation.
func (InterfaceAssociation) Type() uint8 { return DescInterfaceAssociation }

// ParseInterfaceAssociation decodes an interface association descriptor.
func ParseInterfaceAssociation(b []byte) (InterfaceAssociation, error) {
	b, err := header("interface association descriptor", b, DescInterfaceAssociation, 8)
	if err != nil {
		return InterfaceAssociation{}, err
	}
	return InterfaceAssociation{FirstInterface: b[2], InterfaceCount: b[3], Class: b[4], SubClass: b[5], Protocol: b[6], StringIndex: b[7]}, nil
}

func (d InterfaceAssociation) String() string {
	return fmt.Sprintf("INTERFACE_ASSOCIATION interfaces=%d..%d class=%s/%d/%d string=%d",
		d.FirstInterface, int(d.FirstInterface)+int(d.InterfaceCount)-1, ClassName(d.Class), d.SubClass, d.Protocol, d.StringIndex)
}

// SSEndpointCompanion is the SuperSpeed endpoint companion descriptor.
type SSEndpointCompanion struct {
	MaxBurst         uint8  `json:"bMaxBurst"`
	Attributes       uint8  `json:"bmAttributes"`
	BytesPerInterval uint16 `json:"wBytesPerInterval"`
}

// Type returns DescSSEndpointCompanion.
func (SSEndpointCompanion) Type() uint8 { return DescSSEndpointCompanion }

// ParseSSEndpointCompanion decodes a SuperSpeed endpoint companion descriptor.
func ParseSSEndpointCompanion(b []byte) (SSEndpointCompanion, error) {
	b, err := header("ss endpoint companion descriptor", b, DescSSEndpointCompanion, 6)
	if err != nil {
		return SSEndpointCompanion{}, err
	}
	return SSEndpointCompanion{MaxBurst: b[2], Attributes: b[3], BytesPerInterval: le16(b[4:])}, nil
}

func (d SSEndpointCompanion) String() string {
	return fmt.Sprintf("SS_ENDPOINT_COMPANION maxburst=%d attributes=0x%02x bytes_per_interval=%d", d.MaxBurst, d.Attributes, d.BytesPerInterval)
}

// ConfigDescriptor is a configuration descriptor with everything that
// follows it in a GET_DESCRIPTOR(CONFIGURATION) response.
type ConfigDescriptor struct {
	TotalLength  uint16                 `json:"wTotalLength"`
	NumInterface uint8                  `json:"bNumInterfaces"`
	Value        uint8                  `json:"bConfigurationValue"`
	StringIndex  uint8                  `json:"iConfiguration"`
	Attributes   uint8                  `json:"bmAttributes"`
	MaxPower     uint8                  `json:"bMaxPower"`
	Interfaces   []InterfaceDescriptor  `json:"interfaces,omitempty"`
	Associations []InterfaceAssociation `json:"associations,omitempty"`
	// Extra holds descriptors before the first interface (OTG, ...).
	Extra []Descriptor `json:"extra,omitempty"`
	// Len is the number of bytes decoded; less than TotalLength when the
	// transfer (or the capture) held only part of the configuration.
	Len int `json:"length"`
}

// Type returns DescConfiguration.
func (ConfigDescriptor) Type() uint8 { return DescConfiguration }

// SelfPowered reports bmAttributes bit 6.
func (c ConfigDescriptor) SelfPowered() bool { return c.Attributes&0x40 != 0 }

// RemoteWakeup reports bmAttributes bit 5.
func (c ConfigDescriptor) RemoteWakeup() bool { return c.Attributes&0x20 != 0 }

// ParseConfiguration decodes a configuration descriptor and walks the
// interface, endpoint and class-specific descriptors after it. Input shorter
// than wTotalLength is decoded up to where it ends (Len says how far); a
// descriptor cut in the middle gives the partial result and an error with
// its offset. Other-speed configurations (type 7) are accepted too.
func ParseConfiguration(b []byte) (ConfigDescriptor, error) {
	const what = "configuration descriptor"
	var c ConfigDescriptor
	if len(b) >= 2 && b[1] != DescConfiguration && b[1] != DescOtherSpeedConfiguration {
		return c, invalidErr(what, 1, "bDescriptorType 0x%02x, want 0x02", b[1])
	}
	if len(b) < 9 {
		return c, shortErr(what, len(b), 9, len(b))
	}
	if b[0] < 9 {
		return c, invalidErr(what, 0, "bLength %d below minimum 9", b[0])
	}
	c.TotalLength, c.NumInterface, c.Value, c.StringIndex, c.Attributes, c.MaxPower = le16(b[2:]), b[4], b[5], b[6], b[7], b[8]
	end := len(b)
	if int(c.TotalLength) < end {
		end = int(c.TotalLength)
	}
	off := int(b[0])
	if off > len(b) {
		return c, shortErr(what, len(b), off, len(b))
	}
	if off > end {
		return c, invalidErr(what, 2, "wTotalLength %d below bLength %d", c.TotalLength, off)
	}
	c.Len = off
	var iface *InterfaceDescriptor
	var ep *EndpointDescriptor
	for off < end {
		rest := b[off:end]
		if len(rest) < 2 {
			return c, shortErr(what, end, off+2, end)
		}
		n := int(rest[0])
		if n < 2 {
			return c, invalidErr(what, off, "descriptor bLength %d", n)
		}
		if n > len(rest) {
			return c, shortErr(what, end, off+n, end)
		}
		d := rest[:n]
		var err error
		switch d[1] {
		case DescInterface:
			var i InterfaceDescriptor
			i, err = ParseInterfaceDescriptor(d)
			if err == nil {
				c.Interfaces = append(c.Interfaces, i)
				iface, ep = &c.Interfaces[len(c.Interfaces)-1], nil
			}
		case DescEndpoint:
			var e EndpointDescriptor
			e, err = ParseEndpointDescriptor(d)
			if err == nil {
				if iface == nil {
					return c, invalidErr(what, off, "endpoint descriptor outside an interface")
				}
				iface.Endpoints = append(iface.Endpoints, e)
				ep = &iface.Endpoints[len(iface.Endpoints)-1]
			}
		case DescInterfaceAssociation:
			var a InterfaceAssociation
			a, err = ParseInterfaceAssociation(d)
			if err == nil {
				c.Associations = append(c.Associations, a)
			}
		case DescSSEndpointCompanion:
			var s SSEndpointCompanion
			s, err = ParseSSEndpointCompanion(d)
			if err == nil {
				if ep != nil {
					ep.Companion = &s
				} else {
					c.Extra = append(c.Extra, s)
				}
			}
		default:
			var class uint8
			if iface != nil {
				class = iface.Class
			}
			var x Descriptor
			x, err = parseClassDescriptor(d, class)
			if err == nil {
				switch {
				case ep != nil:
					ep.Extra = append(ep.Extra, x)
				case iface != nil:
					iface.Extra = append(iface.Extra, x)
				default:
					c.Extra = append(c.Extra, x)
				}
			}
		}
		if err != nil {
			if fe, ok := err.(*FormatError); ok {
				fe.Offset += off
				fe.What = what + ": " + fe.What
			}
			return c, err
		}
		off += n
		c.Len = off
	}
	return c, nil
}

// parseClassDescriptor decodes a descriptor found inside a configuration
// whose meaning depends on the interface class.
func parseClassDescriptor(d []byte, class uint8) (Descriptor, error) {
	switch {
	case d[1] == DescHID && class == ClassHID:
		return ParseHIDDescriptor(d)
	case d[1] == DescCSInterface && (class == ClassCDC || class == ClassCDCData):
		return ParseCDCFunctional(d)
	}
	return RawDescriptor{DescriptorType: d[1], Data: d}, nil
}

func (c ConfigDescriptor) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "CONFIGURATION %d total=%d interfaces=%d maxpower=%dmA", c.Value, c.TotalLength, c.NumInterface, int(c.MaxPower)*2)
	if c.SelfPowered() {
		s.WriteString(" self-powered")
	}
	if c.RemoteWakeup() {
		s.WriteString(" remote-wakeup")
	}
	if c.Len < int(c.TotalLength) {
		fmt.Fprintf(&s, " (%d of %d bytes)", c.Len, c.TotalLength)
	}
	for _, i := range c.Interfaces {
		fmt.Fprintf(&s, "; if%d.%d %s", i.Number, i.AltSetting, ClassName(i.Class))
		for _, e := range i.Endpoints {
			fmt.Fprintf(&s, " ep%02x/%s", e.Address, e.TransferType())
		}
	}
	return s.String()
}

// Tree returns a multi-line, indented rendering of the configuration with
// every descriptor in it.
func (c ConfigDescriptor) Tree() string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s\n", c.String()[:strings.IndexByte(c.String()+";", ';')])
	for _, x := range c.Extra {
		fmt.Fprintf(&s, "  %s\n", x)
	}
	for _, a := range c.Associations {
		fmt.Fprintf(&s, "  %s\n", a)
	}
	for _, i := range c.Interfaces {
		fmt.Fprintf(&s, "  %s\n", i)
		for _, x := range i.Extra {
			fmt.Fprintf(&s, "    %s\n", x)
		}
		for _, e := range i.Endpoints {
			fmt.Fprintf(&s, "    %s\n", e)
			if e.Companion != nil {
				fmt.Fprintf(&s, "      %s\n", e.Companion)
			}
			for _, x := range e.Extra {
				fmt.Fprintf(&s, "      %s\n", x)
			}
		}
	}
	return s.String()
}

// HIDDescriptor is the HID class descriptor that follows a HID interface.
type HIDDescriptor struct {
	HID         BCD            `json:"bcdHID"`
	CountryCode uint8          `json:"bCountryCode"`
	Descriptors []HIDClassDesc `json:"descriptors"`
}

// HIDClassDesc is one (type, length) entry of a HID descriptor.
type HIDClassDesc struct {
	Type   uint8  `json:"bDescriptorType"`
	Length uint16 `json:"wDescriptorLength"`
}

// Type returns DescHID.
func (HIDDescriptor) Type() uint8 { return DescHID }

// ParseHIDDescriptor decodes a HID descriptor.
func ParseHIDDescriptor(b []byte) (HIDDescriptor, error) {
	const what = "hid descriptor"
	b, err := header(what, b, DescHID, 6)
	if err != nil {
		return HIDDescriptor{}, err
	}
	h := HIDDescriptor{HID: BCD(le16(b[2:])), CountryCode: b[4]}
	n := int(b[5])
	if 6+3*n > len(b) {
		return h, invalidErr(what, 5, "bNumDescriptors %d needs %d bytes, bLength is %d", n, 6+3*n, len(b))
	}
	for i := 0; i < n; i++ {
		p := b[6+3*i:]
		h.Descriptors = append(h.Descriptors, HIDClassDesc{Type: p[0], Length: le16(p[1:])})
	}
	return h, nil
}

func (h HIDDescriptor) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "HID hid=%s country=%d", h.HID, h.CountryCode)
	for _, d := range h.Descriptors {
		fmt.Fprintf(&s, " %s(%d)", DescriptorTypeName(d.Type), d.Length)
	}
	return s.String()
}

// ReportDescriptorLength returns the length of the first report
// descriptor announced, 0 if none.
func (h HIDDescriptor) ReportDescriptorLength() int {
	for _, d := range h.Descriptors {
		if d.Type == DescReport {
			return int(d.Length)
		}
	}
	return 0
}
