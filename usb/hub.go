package usb

import "fmt"

// HubDescriptor is a USB 2 hub descriptor (type 0x29) or a SuperSpeed hub
// descriptor (type 0x2a).
type HubDescriptor struct {
	SuperSpeed      bool   `json:"superspeed"`
	NumPorts        uint8  `json:"bNbrPorts"`
	Characteristics uint16 `json:"wHubCharacteristics"`
	PowerOnToGood   uint8  `json:"bPwrOn2PwrGood"` // units of 2 ms
	ControlCurrent  uint8  `json:"bHubContrCurrent"`
	// HeaderDecodeLatency and Delay are SuperSpeed only.
	HeaderDecodeLatency uint8  `json:"bHubHdrDecLat,omitempty"`
	Delay               uint16 `json:"wHubDelay,omitempty"`
	// Removable has bit N set when the device on port N is not removable.
	Removable []byte `json:"DeviceRemovable"`
}

// Type returns DescHub or DescSSHub.
func (h HubDescriptor) Type() uint8 {
	if h.SuperSpeed {
		return DescSSHub
	}
	return DescHub
}

// ParseHubDescriptor decodes a hub descriptor of either kind.
func ParseHubDescriptor(b []byte) (HubDescriptor, error) {
	const what = "hub descriptor"
	if len(b) >= 2 && b[1] == DescSSHub {
		b, err := header(what, b, DescSSHub, 12)
		if err != nil {
			return HubDescriptor{}, err
		}
		return HubDescriptor{SuperSpeed: true, NumPorts: b[2], Characteristics: le16(b[3:]), PowerOnToGood: b[5],
			ControlCurrent: b[6], HeaderDecodeLatency: b[7], Delay: le16(b[8:]), Removable: b[10:12]}, nil
	}
	b, err := header(what, b, DescHub, 7)
	if err != nil {
		return HubDescriptor{}, err
	}
	h := HubDescriptor{NumPorts: b[2], Characteristics: le16(b[3:]), PowerOnToGood: b[5], ControlCurrent: b[6]}
	n := int(h.NumPorts)/8 + 1 // DeviceRemovable: one bit per port plus reserved bit 0
	if len(b) < 7+n {
		return h, invalidErr(what, 0, "bLength %d too small for %d ports", len(b), h.NumPorts)
	}
	h.Removable = b[7 : 7+n]
	return h, nil
}

func (h HubDescriptor) String() string {
	power := [...]string{"ganged", "per-port", "none", "none"}[h.Characteristics&3]
	oc := [...]string{"global", "per-port", "none", "none"}[(h.Characteristics>>3)&3]
	name := "HUB"
	if h.SuperSpeed {
		name = "SS_HUB"
	}
	s := fmt.Sprintf("%s ports=%d power=%s overcurrent=%s compound=%t power_good=%dms current=%dmA",
		name, h.NumPorts, power, oc, h.Characteristics&4 != 0, int(h.PowerOnToGood)*2, h.ControlCurrent)
	if h.SuperSpeed {
		s += fmt.Sprintf(" hdr_dec_lat=%d delay=%dns", h.HeaderDecodeLatency, h.Delay)
	}
	return s + fmt.Sprintf(" removable=% x", h.Removable)
}

// PortStatus is the 4-byte hub port status returned by GET_STATUS to a port.
type PortStatus struct {
	Status uint16 `json:"wPortStatus"`
	Change uint16 `json:"wPortChange"`
}

// ParsePortStatus decodes a hub port status.
func ParsePortStatus(b []byte) (PortStatus, error) {
	if len(b) < 4 {
		return PortStatus{}, shortErr("hub port status", len(b), 4, len(b))
	}
	return PortStatus{Status: le16(b), Change: le16(b[2:])}, nil
}

func (p PortStatus) String() string {
	bits := func(v uint16, names []string) string {
		s := ""
		for i, n := range names {
			if n != "" && v&(1<<i) != 0 {
				if s != "" {
					s += "|"
				}
				s += n
			}
		}
		if s == "" {
			return "0"
		}
		return s
	}
	return fmt.Sprintf("status=%s change=%s",
		bits(p.Status, []string{"connection", "enable", "suspend", "over-current", "reset", "", "", "", "power", "low-speed", "high-speed", "test", "indicator"}),
		bits(p.Change, []string{"connection", "enable", "suspend", "over-current", "reset", "bh-reset", "link-state", "config-error"}))
}
