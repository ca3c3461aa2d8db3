package usb

import (
	"fmt"
	"strings"
	"sync"
)

// CDC functional descriptor subtypes (CDC 1.2 table 13).
const (
	CDCHeader             = 0x00
	CDCCallManagement     = 0x01
	CDCACM                = 0x02
	CDCUnion              = 0x06
	CDCCountrySelection   = 0x07
	CDCEthernetNetworking = 0x0f
	CDCNCM                = 0x1a
	CDCMBIM               = 0x1b
	CDCMBIMExtended       = 0x1c
)

var cdcSubtypeNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		CDCHeader: "HEADER", CDCCallManagement: "CALL_MANAGEMENT", CDCACM: "ACM",
		0x03: "DIRECT_LINE", 0x04: "TELEPHONE_RINGER", 0x05: "TELEPHONE_CALL", CDCUnion: "UNION",
		CDCCountrySelection: "COUNTRY_SELECTION", 0x08: "TELEPHONE_OPERATIONAL_MODES", 0x09: "USB_TERMINAL",
		0x0a: "NETWORK_CHANNEL", 0x0b: "PROTOCOL_UNIT", 0x0c: "EXTENSION_UNIT", 0x0d: "MULTI_CHANNEL",
		0x0e: "CAPI_CONTROL", CDCEthernetNetworking: "ETHERNET_NETWORKING", 0x10: "ATM_NETWORKING",
		0x11: "WIRELESS_HANDSET", 0x12: "MDLM", 0x13: "MDLM_DETAIL", 0x14: "DEVICE_MANAGEMENT", 0x15: "OBEX",
		0x16: "COMMAND_SET", 0x17: "COMMAND_SET_DETAIL", 0x18: "TELEPHONE_CONTROL", 0x19: "OBEX_SERVICE_ID",
		CDCNCM: "NCM", CDCMBIM: "MBIM", CDCMBIMExtended: "MBIM_EXTENDED",
	}
})

// CDCFunctional is a CDC functional descriptor (CS_INTERFACE). Fields not
// used by a subtype are zero.
type CDCFunctional struct {
	Subtype uint8 `json:"bDescriptorSubtype"`
	// Version is bcdCDC (HEADER), bcdNcmVersion (NCM) or bcdMBIMVersion (MBIM).
	Version BCD `json:"version,omitempty"`
	// Capabilities is bmCapabilities (CALL_MANAGEMENT, ACM, NCM).
	Capabilities uint8 `json:"bmCapabilities,omitempty"`
	// DataInterface is bDataInterface (CALL_MANAGEMENT).
	DataInterface uint8 `json:"bDataInterface,omitempty"`
	// Control and Subordinates are the UNION members.
	Control      uint8   `json:"bControlInterface,omitempty"`
	Subordinates []uint8 `json:"bSubordinateInterface,omitempty"`
	// Ethernet networking fields.
	MACAddressIndex uint8  `json:"iMACAddress,omitempty"`
	MaxSegmentSize  uint16 `json:"wMaxSegmentSize,omitempty"`
	// Data is the whole descriptor.
	Data []byte `json:"data"`
}

// Type returns DescCSInterface.
func (CDCFunctional) Type() uint8 { return DescCSInterface }

// ParseCDCFunctional decodes a CDC functional descriptor.
func ParseCDCFunctional(b []byte) (CDCFunctional, error) {
	const what = "cdc functional descriptor"
	b, err := header(what, b, DescCSInterface, 3)
	if err != nil {
		return CDCFunctional{}, err
	}
	f := CDCFunctional{Subtype: b[2], Data: b}
	need := func(n int) error {
		if len(b) < n {
			return invalidErr(what, 0, "%s needs bLength %d, have %d", cdcSubtypeNames()[f.Subtype], n, len(b))
		}
		return nil
	}
	switch f.Subtype {
	case CDCHeader, CDCNCM, CDCMBIM:
		if err := need(5); err != nil {
			return f, err
		}
		f.Version = BCD(le16(b[3:]))
		if f.Subtype == CDCNCM {
			if err := need(6); err != nil {
				return f, err
			}
			f.Capabilities = b[5]
		}
	case CDCCallManagement:
		if err := need(5); err != nil {
			return f, err
		}
		f.Capabilities, f.DataInterface = b[3], b[4]
	case CDCACM:
		if err := need(4); err != nil {
			return f, err
		}
		f.Capabilities = b[3]
	case CDCUnion:
		if err := need(5); err != nil {
			return f, err
		}
		f.Control = b[3]
		f.Subordinates = append([]uint8(nil), b[4:]...)
	case CDCEthernetNetworking:
		if err := need(13); err != nil {
			return f, err
		}
		f.MACAddressIndex = b[3]
		f.MaxSegmentSize = le16(b[8:])
	}
	return f, nil
}

func (f CDCFunctional) String() string {
	name := cdcSubtypeNames()[f.Subtype]
	if name == "" {
		name = fmt.Sprintf("SUBTYPE_0x%02x", f.Subtype)
	}
	s := "CDC " + name
	switch f.Subtype {
	case CDCHeader, CDCMBIM:
		s += " version=" + f.Version.String()
	case CDCNCM:
		s += fmt.Sprintf(" version=%s capabilities=0x%02x", f.Version, f.Capabilities)
	case CDCCallManagement:
		s += fmt.Sprintf(" capabilities=0x%02x data_interface=%d", f.Capabilities, f.DataInterface)
	case CDCACM:
		s += fmt.Sprintf(" capabilities=0x%02x", f.Capabilities)
	case CDCUnion:
		s += fmt.Sprintf(" control=%d subordinates=%v", f.Control, f.Subordinates)
	case CDCEthernetNetworking:
		s += fmt.Sprintf(" mac_string=%d max_segment=%d", f.MACAddressIndex, f.MaxSegmentSize)
	default:
		s += fmt.Sprintf(" % x", f.Data[3:])
	}
	return s
}

// LineCoding is the 7-byte CDC ACM line coding (SET/GET_LINE_CODING).
type LineCoding struct {
	Rate     uint32 `json:"dwDTERate"`
	StopBits uint8  `json:"bCharFormat"` // 0: 1, 1: 1.5, 2: 2 stop bits
	Parity   uint8  `json:"bParityType"` // 0 none, 1 odd, 2 even, 3 mark, 4 space
	DataBits uint8  `json:"bDataBits"`
}

// ParseLineCoding decodes a CDC line coding structure.
func ParseLineCoding(b []byte) (LineCoding, error) {
	if len(b) < 7 {
		return LineCoding{}, shortErr("cdc line coding", len(b), 7, len(b))
	}
	l := LineCoding{Rate: le32(b), StopBits: b[4], Parity: b[5], DataBits: b[6]}
	if l.StopBits > 2 {
		return l, invalidErr("cdc line coding", 4, "bCharFormat %d", l.StopBits)
	}
	if l.Parity > 4 {
		return l, invalidErr("cdc line coding", 5, "bParityType %d", l.Parity)
	}
	return l, nil
}

// String prints the usual "115200 8N1" notation.
func (l LineCoding) String() string {
	p := "NOEMS"[min(l.Parity, 4)]
	stop := [...]string{"1", "1.5", "2"}[min(l.StopBits, 2)]
	return fmt.Sprintf("%d %d%c%s", l.Rate, l.DataBits, p, stop)
}

// CDCNotification is a notification a CDC communications interface sends
// on its interrupt IN endpoint (CDC 1.2 section 6.3, PSTN 6.5).
type CDCNotification struct {
	RequestType  uint8  `json:"bmRequestType"`
	Notification uint8  `json:"bNotification"`
	Value        uint16 `json:"wValue"`
	Index        uint16 `json:"wIndex"`
	Length       uint16 `json:"wLength"`
	Data         []byte `json:"data,omitempty"`
}

// ParseCDCNotification decodes a CDC notification: an 8-byte header like
// a setup packet (bmRequestType 0xa1) followed by wLength data bytes.
func ParseCDCNotification(b []byte) (CDCNotification, error) {
	const what = "cdc notification"
	if len(b) < 8 {
		return CDCNotification{}, shortErr(what, len(b), 8, len(b))
	}
	n := CDCNotification{RequestType: b[0], Notification: b[1], Value: le16(b[2:]), Index: le16(b[4:]), Length: le16(b[6:])}
	if n.RequestType != 0xa1 {
		return n, invalidErr(what, 0, "bmRequestType 0x%02x, want 0xa1", n.RequestType)
	}
	if len(b) < 8+int(n.Length) {
		return n, shortErr(what, len(b), 8+int(n.Length), len(b))
	}
	n.Data = b[8 : 8+int(n.Length)]
	return n, nil
}

func (n CDCNotification) String() string {
	switch n.Notification {
	case 0x00:
		state := "disconnected"
		if n.Value != 0 {
			state = "connected"
		}
		return fmt.Sprintf("NETWORK_CONNECTION %s interface=%d", state, n.Index)
	case 0x01:
		return fmt.Sprintf("RESPONSE_AVAILABLE interface=%d", n.Index)
	case 0x20:
		if len(n.Data) >= 2 {
			st := cdcSerialState(le16(n.Data))
			if st == "" {
				st = "0"
			}
			return fmt.Sprintf("SERIAL_STATE %s interface=%d", st, n.Index)
		}
	case 0x2a:
		if len(n.Data) >= 8 {
			return fmt.Sprintf("CONNECTION_SPEED_CHANGE down=%d up=%d interface=%d", le32(n.Data), le32(n.Data[4:]), n.Index)
		}
	}
	return fmt.Sprintf("NOTIFICATION_0x%02x value=0x%04x interface=%d data=% x", n.Notification, n.Value, n.Index, n.Data)
}

// cdcSerialState decodes a CDC SERIAL_STATE notification bitmap.
func cdcSerialState(v uint16) string {
	var parts []string
	for i, n := range []string{"DCD", "DSR", "BREAK", "RING", "FRAMING", "PARITY", "OVERRUN"} {
		if v&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "|")
}
