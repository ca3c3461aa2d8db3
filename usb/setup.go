package usb

import (
	"strconv"
	"sync"
)

// Setup is the 8-byte setup packet that starts every control transfer.
type Setup struct {
	RequestType uint8  `json:"bmRequestType"`
	Request     uint8  `json:"bRequest"`
	Value       uint16 `json:"wValue"`
	Index       uint16 `json:"wIndex"`
	Length      uint16 `json:"wLength"`
}

// SetupLen is the size of a setup packet on the wire.
const SetupLen = 8

// ParseSetup decodes a setup packet (little-endian fields, as on the bus and
// in usbmon). Bytes after the eighth are ignored.
func ParseSetup(b []byte) (Setup, error) {
	if len(b) < SetupLen {
		return Setup{}, shortErr("setup packet", len(b), SetupLen, len(b))
	}
	return Setup{RequestType: b[0], Request: b[1], Value: le16(b[2:]), Index: le16(b[4:]), Length: le16(b[6:])}, nil
}

// Bytes returns the setup packet as it appears on the wire.
func (s Setup) Bytes() [SetupLen]byte {
	return [SetupLen]byte{s.RequestType, s.Request, byte(s.Value), byte(s.Value >> 8),
		byte(s.Index), byte(s.Index >> 8), byte(s.Length), byte(s.Length >> 8)}
}

// RequestKind is bits 6..5 of bmRequestType.
type RequestKind uint8

// Request kinds.
const (
	KindStandard RequestKind = 0
	KindClass    RequestKind = 1
	KindVendor   RequestKind = 2
	KindReserved RequestKind = 3
)

func (k RequestKind) String() string {
	return [...]string{"standard", "class", "vendor", "reserved"}[k&3]
}

// Recipient is bits 4..0 of bmRequestType.
type Recipient uint8

// Recipients.
const (
	RecipientDevice    Recipient = 0
	RecipientInterface Recipient = 1
	RecipientEndpoint  Recipient = 2
	RecipientOther     Recipient = 3
)

func (r Recipient) String() string {
	switch r {
	case RecipientDevice:
		return "device"
	case RecipientInterface:
		return "interface"
	case RecipientEndpoint:
		return "endpoint"
	case RecipientOther:
		return "other"
	}
	return "recipient " + strconv.Itoa(int(r))
}

// In reports a device-to-host (IN) data stage.
func (s Setup) In() bool { return s.RequestType&0x80 != 0 }

// Kind returns standard, class, vendor or reserved.
func (s Setup) Kind() RequestKind { return RequestKind(s.RequestType>>5) & 3 }

// Recipient returns the request's recipient.
func (s Setup) Recipient() Recipient { return Recipient(s.RequestType & 0x1f) }

// DescriptorType returns the high byte of wValue, the descriptor type of
// GET_DESCRIPTOR and SET_DESCRIPTOR.
func (s Setup) DescriptorType() uint8 { return uint8(s.Value >> 8) }

// DescriptorIndex returns the low byte of wValue, the descriptor index of
// GET_DESCRIPTOR and SET_DESCRIPTOR.
func (s Setup) DescriptorIndex() uint8 { return uint8(s.Value) }

// Standard request codes (USB 3.2 table 9-5).
const (
	ReqGetStatus        = 0x00
	ReqClearFeature     = 0x01
	ReqSetFeature       = 0x03
	ReqSetAddress       = 0x05
	ReqGetDescriptor    = 0x06
	ReqSetDescriptor    = 0x07
	ReqGetConfiguration = 0x08
	ReqSetConfiguration = 0x09
	ReqGetInterface     = 0x0a
	ReqSetInterface     = 0x0b
	ReqSynchFrame       = 0x0c
	ReqSetEncryption    = 0x0d
	ReqGetEncryption    = 0x0e
	ReqSetSel           = 0x30
	ReqSetIsochDelay    = 0x31
)

var standardNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		ReqGetStatus: "GET_STATUS", ReqClearFeature: "CLEAR_FEATURE", ReqSetFeature: "SET_FEATURE",
		ReqSetAddress: "SET_ADDRESS", ReqGetDescriptor: "GET_DESCRIPTOR", ReqSetDescriptor: "SET_DESCRIPTOR",
		ReqGetConfiguration: "GET_CONFIGURATION", ReqSetConfiguration: "SET_CONFIGURATION",
		ReqGetInterface: "GET_INTERFACE", ReqSetInterface: "SET_INTERFACE", ReqSynchFrame: "SYNCH_FRAME",
		ReqSetEncryption: "SET_ENCRYPTION", ReqGetEncryption: "GET_ENCRYPTION",
		ReqSetSel: "SET_SEL", ReqSetIsochDelay: "SET_ISOCH_DELAY",
	}
})

// Class codes (bDeviceClass / bInterfaceClass) used to pick class request
// and class descriptor decoders.
const (
	ClassPerInterface = 0x00
	ClassAudio        = 0x01
	ClassCDC          = 0x02
	ClassHID          = 0x03
	ClassPrinter      = 0x07
	ClassMassStorage  = 0x08
	ClassHub          = 0x09
	ClassCDCData      = 0x0a
	ClassVideo        = 0x0e
	ClassWireless     = 0xe0
	ClassMisc         = 0xef
	ClassApplication  = 0xfe
	ClassVendor       = 0xff
)

// ClassName returns a short name of a USB class code.
func ClassName(c uint8) string {
	switch c {
	case ClassPerInterface:
		return "per-interface"
	case ClassAudio:
		return "audio"
	case ClassCDC:
		return "cdc"
	case ClassHID:
		return "hid"
	case 0x05:
		return "physical"
	case 0x06:
		return "image"
	case ClassPrinter:
		return "printer"
	case ClassMassStorage:
		return "mass-storage"
	case ClassHub:
		return "hub"
	case ClassCDCData:
		return "cdc-data"
	case 0x0b:
		return "smart-card"
	case 0x0d:
		return "content-security"
	case ClassVideo:
		return "video"
	case 0x0f:
		return "personal-healthcare"
	case 0x10:
		return "audio-video"
	case 0x11:
		return "billboard"
	case 0x12:
		return "usb-c-bridge"
	case 0xdc:
		return "diagnostic"
	case ClassWireless:
		return "wireless"
	case ClassMisc:
		return "misc"
	case ClassApplication:
		return "application"
	case ClassVendor:
		return "vendor"
	}
	return "class 0x" + strconv.FormatUint(uint64(c), 16)
}

// Class request codes.
const (
	HIDGetReport   = 0x01
	HIDGetIdle     = 0x02
	HIDGetProtocol = 0x03
	HIDSetReport   = 0x09
	HIDSetIdle     = 0x0a
	HIDSetProtocol = 0x0b

	MSCGetMaxLUN = 0xfe
	MSCReset     = 0xff

	CDCSendEncapsulatedCommand = 0x00
	CDCGetEncapsulatedResponse = 0x01
	CDCSetCommFeature          = 0x02
	CDCGetCommFeature          = 0x03
	CDCClearCommFeature        = 0x04
	CDCSetLineCoding           = 0x20
	CDCGetLineCoding           = 0x21
	CDCSetControlLineState     = 0x22
	CDCSendBreak               = 0x23

	HubClearTTBuffer   = 0x08
	HubResetTT         = 0x09
	HubGetTTState      = 0x0a
	HubStopTT          = 0x0b
	HubSetDepth        = 0x0c
	HubGetPortErrCount = 0x0d
)

var hidReqNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		HIDGetReport: "GET_REPORT", HIDGetIdle: "GET_IDLE", HIDGetProtocol: "GET_PROTOCOL",
		HIDSetReport: "SET_REPORT", HIDSetIdle: "SET_IDLE", HIDSetProtocol: "SET_PROTOCOL",
	}
})

var cdcReqNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		CDCSendEncapsulatedCommand: "SEND_ENCAPSULATED_COMMAND", CDCGetEncapsulatedResponse: "GET_ENCAPSULATED_RESPONSE",
		CDCSetCommFeature: "SET_COMM_FEATURE", CDCGetCommFeature: "GET_COMM_FEATURE", CDCClearCommFeature: "CLEAR_COMM_FEATURE",
		CDCSetLineCoding: "SET_LINE_CODING", CDCGetLineCoding: "GET_LINE_CODING",
		CDCSetControlLineState: "SET_CONTROL_LINE_STATE", CDCSendBreak: "SEND_BREAK",
		0x40: "SET_ETHERNET_MULTICAST_FILTERS", 0x41: "SET_ETHERNET_PM_PATTERN_FILTER",
		0x42: "GET_ETHERNET_PM_PATTERN_FILTER", 0x43: "SET_ETHERNET_PACKET_FILTER", 0x44: "GET_ETHERNET_STATISTIC",
		0x80: "GET_NTB_PARAMETERS", 0x83: "GET_NTB_INPUT_SIZE", 0x84: "SET_NTB_INPUT_SIZE",
	}
})

var hubReqNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		ReqGetStatus: "GET_STATUS", ReqClearFeature: "CLEAR_FEATURE", ReqSetFeature: "SET_FEATURE",
		ReqGetDescriptor: "GET_DESCRIPTOR", ReqSetDescriptor: "SET_DESCRIPTOR",
		HubClearTTBuffer: "CLEAR_TT_BUFFER", HubResetTT: "RESET_TT", HubGetTTState: "GET_TT_STATE",
		HubStopTT: "STOP_TT", HubSetDepth: "SET_HUB_DEPTH", HubGetPortErrCount: "GET_PORT_ERR_COUNT",
	}
})

// requestClass decides which class a class request belongs to. hint is the
// interface (or device) class when known, 0 otherwise; without a hint the
// class is guessed from the recipient and request code.
func (s Setup) requestClass(hint uint8) uint8 {
	switch hint {
	case ClassHID, ClassMassStorage, ClassHub, ClassCDC, ClassCDCData:
		if hint == ClassCDCData {
			return ClassCDC
		}
		return hint
	}
	switch s.Recipient() {
	case RecipientDevice, RecipientOther:
		return ClassHub
	}
	switch {
	case s.Request == MSCReset || s.Request == MSCGetMaxLUN:
		return ClassMassStorage
	case s.Request >= 0x20 && s.Request <= 0x23, s.Request >= 0x40 && s.Request <= 0x44, s.Request == CDCSendEncapsulatedCommand:
		return ClassCDC
	case hidReqNames()[s.Request] != "":
		return ClassHID
	}
	return 0
}

// Name returns the request's name: the chapter 9 name for standard requests,
// the class request name (HID, mass storage, hub, CDC) for class requests,
// "VENDOR_0xNN" for vendor requests. hint is the class of the addressed
// interface or device when known (see Identities), 0 to guess.
func (s Setup) Name(hint uint8) string {
	switch s.Kind() {
	case KindStandard:
		if n, ok := standardNames()[s.Request]; ok {
			return n
		}
	case KindClass:
		var n string
		switch s.requestClass(hint) {
		case ClassHID:
			n = hidReqNames()[s.Request]
		case ClassCDC:
			n = cdcReqNames()[s.Request]
		case ClassHub:
			n = hubReqNames()[s.Request]
		case ClassMassStorage:
			switch s.Request {
			case MSCReset:
				n = "BULK_ONLY_MASS_STORAGE_RESET"
			case MSCGetMaxLUN:
				n = "GET_MAX_LUN"
			}
		}
		if n != "" {
			return n
		}
		return "CLASS_0x" + hex2(s.Request)
	case KindVendor:
		return "VENDOR_0x" + hex2(s.Request)
	}
	return "REQUEST_0x" + hex2(s.Request)
}

func hex2(b uint8) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// String describes the request, guessing the class of class requests.
func (s Setup) String() string { return string(s.AppendDescription(nil, 0)) }

// Describe returns a one-line description: name, decoded wValue/wIndex and
// length, e.g. "GET_DESCRIPTOR DEVICE index=0 len=18".
func (s Setup) Describe(hint uint8) string { return string(s.AppendDescription(nil, hint)) }

// AppendDescription appends Describe(hint) to dst without allocating when
// dst has room.
func (s Setup) AppendDescription(dst []byte, hint uint8) []byte {
	dst = append(dst, s.Name(hint)...)
	switch s.Kind() {
	case KindStandard:
		dst = s.appendStandard(dst)
	case KindClass:
		dst = s.appendClass(dst, hint)
	default:
		dst = s.appendRaw(dst)
	}
	return dst
}

func (s Setup) appendRaw(dst []byte) []byte {
	dst = append(dst, " value=0x"...)
	dst = appendHex(dst, uint64(s.Value), 4)
	dst = append(dst, " index=0x"...)
	dst = appendHex(dst, uint64(s.Index), 4)
	return appendLen(dst, s.Length)
}

func appendLen(dst []byte, n uint16) []byte {
	dst = append(dst, " len="...)
	return strconv.AppendUint(dst, uint64(n), 10)
}

func appendHex(dst []byte, v uint64, width int) []byte {
	const digits = "0123456789abcdef"
	for i := width - 1; i >= 0; i-- {
		dst = append(dst, digits[(v>>(4*uint(i)))&15])
	}
	return dst
}

func appendKV(dst []byte, k string, v uint64) []byte {
	dst = append(dst, ' ')
	dst = append(dst, k...)
	dst = append(dst, '=')
	return strconv.AppendUint(dst, v, 10)
}

func appendEndpointAddr(dst []byte, idx uint16) []byte {
	dst = append(dst, " ep=0x"...)
	return appendHex(dst, uint64(idx&0xff), 2)
}

func (s Setup) appendTarget(dst []byte) []byte {
	switch s.Recipient() {
	case RecipientInterface:
		dst = appendKV(dst, "interface", uint64(s.Index&0xff))
	case RecipientEndpoint:
		dst = appendEndpointAddr(dst, s.Index)
	case RecipientDevice:
		dst = append(dst, " device"...)
	default:
		dst = append(dst, ' ')
		dst = append(dst, s.Recipient().String()...)
		dst = appendKV(dst, "index", uint64(s.Index))
	}
	return dst
}

func (s Setup) appendStandard(dst []byte) []byte {
	switch s.Request {
	case ReqGetStatus:
		dst = s.appendTarget(dst)
		if s.Value != 0 {
			dst = appendKV(dst, "type", uint64(s.Value)) // 1: PTM status
		}
	case ReqClearFeature, ReqSetFeature:
		dst = append(dst, ' ')
		dst = append(dst, FeatureName(s.Recipient(), s.Value)...)
		dst = s.appendTarget(dst)
		if s.Recipient() == RecipientDevice && s.Value == 2 { // TEST_MODE
			dst = appendKV(dst, "test", uint64(s.Index>>8))
		}
		if s.Recipient() == RecipientInterface && s.Value == 0 { // FUNCTION_SUSPEND options
			dst = appendKV(dst, "options", uint64(s.Index>>8))
		}
		return dst
	case ReqSetAddress:
		return appendKV(dst, "addr", uint64(s.Value))
	case ReqGetDescriptor, ReqSetDescriptor:
		dst = append(dst, ' ')
		dst = append(dst, DescriptorTypeName(s.DescriptorType())...)
		dst = appendKV(dst, "index", uint64(s.DescriptorIndex()))
		switch {
		case s.DescriptorType() == DescString && s.DescriptorIndex() != 0:
			dst = append(dst, " lang=0x"...)
			dst = appendHex(dst, uint64(s.Index), 4)
		case s.Recipient() == RecipientInterface:
			dst = appendKV(dst, "interface", uint64(s.Index))
		case s.Index != 0:
			dst = appendKV(dst, "windex", uint64(s.Index))
		}
	case ReqGetConfiguration:
	case ReqSetConfiguration:
		return appendKV(dst, "config", uint64(s.Value&0xff))
	case ReqGetInterface:
		dst = appendKV(dst, "interface", uint64(s.Index))
	case ReqSetInterface:
		dst = appendKV(dst, "interface", uint64(s.Index))
		return appendKV(dst, "alt", uint64(s.Value))
	case ReqSynchFrame:
		dst = appendEndpointAddr(dst, s.Index)
	case ReqSetSel:
	case ReqSetIsochDelay:
		dst = appendKV(dst, "delay_ns", uint64(s.Value))
		return dst
	default:
		return s.appendRaw(dst)
	}
	return appendLen(dst, s.Length)
}

func (s Setup) appendClass(dst []byte, hint uint8) []byte {
	switch s.requestClass(hint) {
	case ClassHID:
		switch s.Request {
		case HIDGetReport, HIDSetReport:
			dst = append(dst, ' ')
			dst = append(dst, hidReportType(uint8(s.Value>>8))...)
			dst = appendKV(dst, "id", uint64(s.Value&0xff))
			dst = appendKV(dst, "interface", uint64(s.Index))
			return appendLen(dst, s.Length)
		case HIDGetIdle, HIDSetIdle:
			if s.Request == HIDSetIdle {
				dst = appendKV(dst, "duration_ms", uint64(s.Value>>8)*4)
			}
			dst = appendKV(dst, "id", uint64(s.Value&0xff))
			dst = appendKV(dst, "interface", uint64(s.Index))
			if s.Request == HIDGetIdle {
				dst = appendLen(dst, s.Length)
			}
			return dst
		case HIDGetProtocol:
			dst = appendKV(dst, "interface", uint64(s.Index))
			return appendLen(dst, s.Length)
		case HIDSetProtocol:
			if s.Value == 0 {
				dst = append(dst, " boot"...)
			} else {
				dst = append(dst, " report"...)
			}
			return appendKV(dst, "interface", uint64(s.Index))
		}
	case ClassMassStorage:
		switch s.Request {
		case MSCReset:
			return appendKV(dst, "interface", uint64(s.Index))
		case MSCGetMaxLUN:
			dst = appendKV(dst, "interface", uint64(s.Index))
			return appendLen(dst, s.Length)
		}
	case ClassCDC:
		switch s.Request {
		case CDCSetControlLineState:
			dst = append(dst, " DTR="...)
			dst = appendBool(dst, s.Value&1 != 0)
			dst = append(dst, " RTS="...)
			dst = appendBool(dst, s.Value&2 != 0)
			return appendKV(dst, "interface", uint64(s.Index))
		case CDCSendBreak:
			if s.Value == 0xffff {
				dst = append(dst, " duration=until-cleared"...)
			} else {
				dst = appendKV(dst, "duration_ms", uint64(s.Value))
			}
			return appendKV(dst, "interface", uint64(s.Index))
		case CDCSetLineCoding, CDCGetLineCoding, CDCSendEncapsulatedCommand, CDCGetEncapsulatedResponse:
			dst = appendKV(dst, "interface", uint64(s.Index))
			return appendLen(dst, s.Length)
		}
	case ClassHub:
		switch s.Request {
		case ReqClearFeature, ReqSetFeature:
			dst = append(dst, ' ')
			if s.Recipient() == RecipientOther {
				dst = append(dst, HubPortFeatureName(s.Value)...)
				dst = appendKV(dst, "port", uint64(s.Index&0xff))
				if sel := s.Index >> 8; sel != 0 {
					dst = appendKV(dst, "selector", uint64(sel))
				}
				return dst
			}
			dst = append(dst, hubFeatureName(s.Value)...)
			return dst
		case ReqGetStatus:
			if s.Recipient() == RecipientOther {
				dst = appendKV(dst, "port", uint64(s.Index&0xff))
			} else {
				dst = append(dst, " hub"...)
			}
			return appendLen(dst, s.Length)
		case ReqGetDescriptor, ReqSetDescriptor:
			dst = append(dst, ' ')
			dst = append(dst, DescriptorTypeName(s.DescriptorType())...)
			dst = appendKV(dst, "index", uint64(s.DescriptorIndex()))
			return appendLen(dst, s.Length)
		case HubSetDepth:
			return appendKV(dst, "depth", uint64(s.Value))
		case HubClearTTBuffer, HubResetTT, HubGetTTState, HubStopTT, HubGetPortErrCount:
			dst = appendKV(dst, "port", uint64(s.Index&0xff))
			if s.Length != 0 {
				dst = appendLen(dst, s.Length)
			}
			return dst
		}
	}
	return s.appendRaw(dst)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, '1')
	}
	return append(dst, '0')
}

func hidReportType(t uint8) string {
	switch t {
	case 1:
		return "input"
	case 2:
		return "output"
	case 3:
		return "feature"
	}
	return "type" + strconv.Itoa(int(t))
}

// FeatureName names a standard feature selector for its recipient.
func FeatureName(r Recipient, v uint16) string {
	switch r {
	case RecipientDevice:
		switch v {
		case 1:
			return "DEVICE_REMOTE_WAKEUP"
		case 2:
			return "TEST_MODE"
		case 3:
			return "B_HNP_ENABLE"
		case 4:
			return "A_HNP_SUPPORT"
		case 5:
			return "A_ALT_HNP_SUPPORT"
		case 6:
			return "WUSB_DEVICE"
		case 48:
			return "U1_ENABLE"
		case 49:
			return "U2_ENABLE"
		case 50:
			return "LTM_ENABLE"
		}
	case RecipientInterface:
		if v == 0 {
			return "FUNCTION_SUSPEND"
		}
	case RecipientEndpoint:
		if v == 0 {
			return "ENDPOINT_HALT"
		}
	}
	return "FEATURE_" + strconv.Itoa(int(v))
}

func hubFeatureName(v uint16) string {
	switch v {
	case 0:
		return "C_HUB_LOCAL_POWER"
	case 1:
		return "C_HUB_OVER_CURRENT"
	}
	return "FEATURE_" + strconv.Itoa(int(v))
}

var hubPortFeatures = sync.OnceValue(func() map[uint16]string {
	return map[uint16]string{
		0: "PORT_CONNECTION", 1: "PORT_ENABLE", 2: "PORT_SUSPEND", 3: "PORT_OVER_CURRENT", 4: "PORT_RESET",
		5: "PORT_LINK_STATE", 8: "PORT_POWER", 9: "PORT_LOW_SPEED", 16: "C_PORT_CONNECTION", 17: "C_PORT_ENABLE",
		18: "C_PORT_SUSPEND", 19: "C_PORT_OVER_CURRENT", 20: "C_PORT_RESET", 21: "PORT_TEST", 22: "PORT_INDICATOR",
		23: "PORT_U1_TIMEOUT", 24: "PORT_U2_TIMEOUT", 25: "C_PORT_LINK_STATE", 26: "C_PORT_CONFIG_ERROR",
		27: "PORT_REMOTE_WAKE_MASK", 28: "BH_PORT_RESET", 29: "C_BH_PORT_RESET", 30: "FORCE_LINKPM_ACCEPT",
	}
})

// HubPortFeatureName names a hub port feature selector (USB 2 table 11-17
// and USB 3 table 10-9).
func HubPortFeatureName(v uint16) string {
	if n, ok := hubPortFeatures()[v]; ok {
		return n
	}
	return "FEATURE_" + strconv.Itoa(int(v))
}
