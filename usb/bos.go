package usb

import (
	"fmt"
	"strings"
	"sync"
)

// Device capability types (USB 3.2 table 9-14).
const (
	CapWirelessUSB    = 0x01
	CapUSB2Extension  = 0x02
	CapSuperSpeed     = 0x03
	CapContainerID    = 0x04
	CapPlatform       = 0x05
	CapPowerDelivery  = 0x06
	CapBatteryInfo    = 0x07
	CapPDConsumerPort = 0x08
	CapPDProviderPort = 0x09
	CapSuperSpeedPlus = 0x0a
	CapPrecisionTime  = 0x0b
	CapWirelessUSBExt = 0x0c
	CapBillboard      = 0x0d
	CapAuthentication = 0x0e
	CapBillboardEx    = 0x0f
	CapConfigSummary  = 0x10
)

var capNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		CapWirelessUSB: "WIRELESS_USB", CapUSB2Extension: "USB_2.0_EXTENSION", CapSuperSpeed: "SUPERSPEED_USB",
		CapContainerID: "CONTAINER_ID", CapPlatform: "PLATFORM", CapPowerDelivery: "POWER_DELIVERY",
		CapBatteryInfo: "BATTERY_INFO", CapPDConsumerPort: "PD_CONSUMER_PORT", CapPDProviderPort: "PD_PROVIDER_PORT",
		CapSuperSpeedPlus: "SUPERSPEED_PLUS", CapPrecisionTime: "PRECISION_TIME_MEASUREMENT",
		CapWirelessUSBExt: "WIRELESS_USB_EXT", CapBillboard: "BILLBOARD", CapAuthentication: "AUTHENTICATION",
		CapBillboardEx: "BILLBOARD_EX", CapConfigSummary: "CONFIGURATION_SUMMARY",
	}
})

// DeviceCapability is one device capability descriptor of a BOS.
type DeviceCapability struct {
	CapabilityType uint8  `json:"bDevCapabilityType"`
	Data           []byte `json:"data"` // the whole descriptor
}

// Type returns DescDeviceCapability.
func (DeviceCapability) Type() uint8 { return DescDeviceCapability }

func (c DeviceCapability) String() string {
	name := capNames()[c.CapabilityType]
	if name == "" {
		name = fmt.Sprintf("CAPABILITY_0x%02x", c.CapabilityType)
	}
	d := c.Data
	switch c.CapabilityType {
	case CapUSB2Extension:
		if len(d) >= 7 {
			a := le32(d[3:])
			return fmt.Sprintf("%s attributes=0x%08x lpm=%t", name, a, a&2 != 0)
		}
	case CapSuperSpeed:
		if len(d) >= 10 {
			return fmt.Sprintf("%s attributes=0x%02x speeds=0x%04x functionality=%d u1_exit=%dus u2_exit=%dus",
				name, d[3], le16(d[4:]), d[6], d[7], le16(d[8:]))
		}
	case CapContainerID:
		if len(d) >= 20 {
			return fmt.Sprintf("%s %s", name, uuidLE(d[4:20]))
		}
	case CapPlatform:
		if len(d) >= 20 {
			return fmt.Sprintf("%s uuid=%s data=% x", name, uuidLE(d[4:20]), d[20:])
		}
	case CapSuperSpeedPlus:
		if len(d) >= 12 {
			return fmt.Sprintf("%s attributes=0x%08x functionality=0x%04x sublink_speeds=%d", name, le32(d[4:]), le16(d[8:]), (le32(d[4:])&0x1f)+1)
		}
	}
	return fmt.Sprintf("%s % x", name, d[min(3, len(d)):])
}

// uuidLE formats a 16-byte UUID stored in USB (little-endian) order.
func uuidLE(u []byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%02x%02x-%x", le32(u), le16(u[4:]), le16(u[6:]), u[8], u[9], u[10:16])
}

// BOSDescriptor is a binary device object store with its capabilities.
type BOSDescriptor struct {
	TotalLength  uint16             `json:"wTotalLength"`
	NumCaps      uint8              `json:"bNumDeviceCaps"`
	Capabilities []DeviceCapability `json:"capabilities,omitempty"`
	// Len is the number of bytes decoded (less than TotalLength when the
	// transfer read only the 5-byte header).
	Len int `json:"length"`
}

// Type returns DescBOS.
func (BOSDescriptor) Type() uint8 { return DescBOS }

// ParseBOS decodes a BOS descriptor and the capability descriptors that
// follow, up to wTotalLength or the end of the input.
func ParseBOS(b []byte) (BOSDescriptor, error) {
	const what = "bos descriptor"
	var d BOSDescriptor
	if len(b) >= 2 && b[1] != DescBOS {
		return d, invalidErr(what, 1, "bDescriptorType 0x%02x, want 0x0f", b[1])
	}
	if len(b) < 5 {
		return d, shortErr(what, len(b), 5, len(b))
	}
	if b[0] < 5 {
		return d, invalidErr(what, 0, "bLength %d below minimum 5", b[0])
	}
	d.TotalLength, d.NumCaps = le16(b[2:]), b[4]
	end := min(len(b), int(d.TotalLength))
	off := int(b[0])
	d.Len = min(off, end)
	for off < end {
		rest := b[off:end]
		if len(rest) < 3 {
			return d, shortErr(what, end, off+3, end)
		}
		n := int(rest[0])
		if n < 3 {
			return d, invalidErr(what, off, "capability bLength %d", n)
		}
		if n > len(rest) {
			return d, shortErr(what, end, off+n, end)
		}
		if rest[1] != DescDeviceCapability {
			return d, invalidErr(what, off+1, "bDescriptorType 0x%02x inside BOS, want 0x10", rest[1])
		}
		d.Capabilities = append(d.Capabilities, DeviceCapability{CapabilityType: rest[2], Data: rest[:n]})
		off += n
		d.Len = off
	}
	return d, nil
}

func (d BOSDescriptor) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "BOS total=%d caps=%d", d.TotalLength, d.NumCaps)
	for _, c := range d.Capabilities {
		s.WriteString("; ")
		s.WriteString(c.String())
	}
	return s.String()
}
