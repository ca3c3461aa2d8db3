package usb

import (
	"fmt"
	"strings"
	"sync"
)

// Bulk-Only Transport signatures and sizes.
const (
	CBWSignature = 0x43425355 // "USBC" little-endian
	CSWSignature = 0x53425355 // "USBS" little-endian
	CBWLen       = 31
	CSWLen       = 13
)

// CBW is a mass storage Command Block Wrapper.
type CBW struct {
	Tag                uint32 `json:"dCBWTag"`
	DataTransferLength uint32 `json:"dCBWDataTransferLength"`
	Flags              uint8  `json:"bmCBWFlags"`
	LUN                uint8  `json:"bCBWLUN"`
	CBLength           uint8  `json:"bCBWCBLength"`
	CB                 [16]byte
}

// In reports a device-to-host data stage.
func (c CBW) In() bool { return c.Flags&0x80 != 0 }

// Command returns the CDB (CBLength bytes).
func (c CBW) Command() []byte { return c.CB[:min(int(c.CBLength), 16)] }

// IsCBW reports whether b starts with a CBW signature and is 31 bytes.
func IsCBW(b []byte) bool { return len(b) == CBWLen && le32(b) == CBWSignature }

// IsCSW reports whether b starts with a CSW signature and is 13 bytes.
func IsCSW(b []byte) bool { return len(b) == CSWLen && le32(b) == CSWSignature }

// ParseCBW decodes a 31-byte CBW.
func ParseCBW(b []byte) (CBW, error) {
	const what = "cbw"
	if len(b) < CBWLen {
		return CBW{}, shortErr(what, len(b), CBWLen, len(b))
	}
	if le32(b) != CBWSignature {
		return CBW{}, invalidErr(what, 0, "signature 0x%08x, want 0x%08x (USBC)", le32(b), CBWSignature)
	}
	c := CBW{Tag: le32(b[4:]), DataTransferLength: le32(b[8:]), Flags: b[12], LUN: b[13] & 0x0f, CBLength: b[14] & 0x1f}
	if c.CBLength < 1 || c.CBLength > 16 {
		return c, invalidErr(what, 14, "bCBWCBLength %d outside 1..16", c.CBLength)
	}
	copy(c.CB[:], b[15:31])
	return c, nil
}

func (c CBW) String() string {
	dir := "out"
	if c.In() {
		dir = "in"
	}
	cdb, err := ParseCDB(c.Command())
	desc := cdb.String()
	if err != nil {
		desc = fmt.Sprintf("% x (%v)", c.Command(), err)
	}
	return fmt.Sprintf("CBW tag=0x%x lun=%d %s %d: %s", c.Tag, c.LUN, dir, c.DataTransferLength, desc)
}

// CSW is a mass storage Command Status Wrapper.
type CSW struct {
	Tag     uint32 `json:"dCSWTag"`
	Residue uint32 `json:"dCSWDataResidue"`
	Status  uint8  `json:"bCSWStatus"` // 0 passed, 1 failed, 2 phase error
}

// ParseCSW decodes a 13-byte CSW.
func ParseCSW(b []byte) (CSW, error) {
	const what = "csw"
	if len(b) < CSWLen {
		return CSW{}, shortErr(what, len(b), CSWLen, len(b))
	}
	if le32(b) != CSWSignature {
		return CSW{}, invalidErr(what, 0, "signature 0x%08x, want 0x%08x (USBS)", le32(b), CSWSignature)
	}
	c := CSW{Tag: le32(b[4:]), Residue: le32(b[8:]), Status: b[12]}
	if c.Status > 2 {
		return c, invalidErr(what, 12, "bCSWStatus %d", c.Status)
	}
	return c, nil
}

// StatusName returns "passed", "failed" or "phase-error".
func (c CSW) StatusName() string {
	switch c.Status {
	case 0:
		return "passed"
	case 1:
		return "failed"
	case 2:
		return "phase-error"
	}
	return fmt.Sprintf("status-%d", c.Status)
}

func (c CSW) String() string {
	return fmt.Sprintf("CSW tag=0x%x %s residue=%d", c.Tag, c.StatusName(), c.Residue)
}

// SCSI operation codes decoded by ParseCDB.
const (
	SCSITestUnitReady        = 0x00
	SCSIRequestSense         = 0x03
	SCSIFormatUnit           = 0x04
	SCSIRead6                = 0x08
	SCSIWrite6               = 0x0a
	SCSIInquiry              = 0x12
	SCSIModeSelect6          = 0x15
	SCSIModeSense6           = 0x1a
	SCSIStartStopUnit        = 0x1b
	SCSISendDiagnostic       = 0x1d
	SCSIPreventAllow         = 0x1e
	SCSIReadFormatCapacities = 0x23
	SCSIReadCapacity10       = 0x25
	SCSIRead10               = 0x28
	SCSIWrite10              = 0x2a
	SCSIVerify10             = 0x2f
	SCSISynchronizeCache10   = 0x35
	SCSIReadTOC              = 0x43
	SCSIGetConfiguration     = 0x46
	SCSIGetEventStatus       = 0x4a
	SCSIModeSelect10         = 0x55
	SCSIModeSense10          = 0x5a
	SCSIATAPassThrough16     = 0x85
	SCSIRead16               = 0x88
	SCSIWrite16              = 0x8a
	SCSISynchronizeCache16   = 0x91
	SCSIServiceActionIn16    = 0x9e
	SCSIReportLUNs           = 0xa0
	SCSIATAPassThrough12     = 0xa1
	SCSIRead12               = 0xa8
	SCSIWrite12              = 0xaa
)

var scsiNames = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{
		SCSITestUnitReady: "TEST_UNIT_READY", 0x01: "REZERO_UNIT", SCSIRequestSense: "REQUEST_SENSE", SCSIFormatUnit: "FORMAT_UNIT",
		SCSIRead6: "READ_6", SCSIWrite6: "WRITE_6", SCSIInquiry: "INQUIRY", SCSIModeSelect6: "MODE_SELECT_6",
		SCSIModeSense6: "MODE_SENSE_6", SCSIStartStopUnit: "START_STOP_UNIT", SCSISendDiagnostic: "SEND_DIAGNOSTIC",
		SCSIPreventAllow: "PREVENT_ALLOW_MEDIUM_REMOVAL", SCSIReadFormatCapacities: "READ_FORMAT_CAPACITIES",
		SCSIReadCapacity10: "READ_CAPACITY_10", SCSIRead10: "READ_10", SCSIWrite10: "WRITE_10", SCSIVerify10: "VERIFY_10",
		SCSISynchronizeCache10: "SYNCHRONIZE_CACHE_10", SCSIReadTOC: "READ_TOC", SCSIGetConfiguration: "GET_CONFIGURATION",
		SCSIGetEventStatus: "GET_EVENT_STATUS_NOTIFICATION", SCSIModeSelect10: "MODE_SELECT_10", SCSIModeSense10: "MODE_SENSE_10",
		SCSIATAPassThrough16: "ATA_PASS_THROUGH_16", SCSIRead16: "READ_16", SCSIWrite16: "WRITE_16",
		SCSISynchronizeCache16: "SYNCHRONIZE_CACHE_16", SCSIServiceActionIn16: "SERVICE_ACTION_IN_16",
		SCSIReportLUNs: "REPORT_LUNS", SCSIATAPassThrough12: "ATA_PASS_THROUGH_12", SCSIRead12: "READ_12", SCSIWrite12: "WRITE_12",
		0x2e: "WRITE_AND_VERIFY_10", 0x42: "UNMAP", 0x4d: "LOG_SENSE", 0xbb: "SET_CD_SPEED",
	}
})

// cdbLen is the CDB length implied by the opcode's group code.
func cdbLen(op uint8) int {
	switch op >> 5 {
	case 0:
		return 6
	case 1, 2:
		return 10
	case 4:
		return 16
	case 5:
		return 12
	}
	return 1
}

// CDB is a decoded SCSI command descriptor block. Fields a command does not
// carry are zero.
type CDB struct {
	Opcode           uint8  `json:"opcode"`
	ServiceAction    uint8  `json:"service_action,omitempty"`
	LBA              uint64 `json:"lba,omitempty"`
	Blocks           uint32 `json:"blocks,omitempty"`            // transfer length in blocks (READ/WRITE/VERIFY)
	AllocationLen    uint32 `json:"allocation_length,omitempty"` // INQUIRY, REQUEST_SENSE, MODE_SENSE, ...
	EVPD             bool   `json:"evpd,omitempty"`
	Page             uint8  `json:"page,omitempty"` // INQUIRY VPD page or MODE_SENSE page code
	Subpage          uint8  `json:"subpage,omitempty"`
	Prevent          uint8  `json:"prevent,omitempty"`
	Start, LoadEject bool   `json:"-"`
	FUA              bool   `json:"fua,omitempty"`
	Raw              []byte `json:"raw"`
}

// Name returns the command name ("READ_10"), "SCSI_0xNN" when unknown.
func (c CDB) Name() string {
	if c.Opcode == SCSIServiceActionIn16 {
		switch c.ServiceAction {
		case 0x10:
			return "READ_CAPACITY_16"
		case 0x12:
			return "GET_LBA_STATUS"
		}
	}
	if n, ok := scsiNames()[c.Opcode]; ok {
		return n
	}
	return fmt.Sprintf("SCSI_0x%02x", c.Opcode)
}

// ParseCDB decodes a SCSI CDB. The CDB must be at least as long as its
// opcode's group requires (6, 10, 12 or 16 bytes).
func ParseCDB(b []byte) (CDB, error) {
	const what = "scsi cdb"
	if len(b) < 1 {
		return CDB{}, shortErr(what, 0, 1, 0)
	}
	c := CDB{Opcode: b[0], Raw: b}
	if n := cdbLen(b[0]); len(b) < n {
		return c, shortErr(what, len(b), n, len(b))
	}
	switch c.Opcode {
	case SCSIRead6, SCSIWrite6:
		c.LBA = uint64(b[1]&0x1f)<<16 | uint64(be16(b[2:]))
		c.Blocks = uint32(b[4])
		if c.Blocks == 0 {
			c.Blocks = 256
		}
	case SCSIRequestSense:
		c.AllocationLen = uint32(b[4])
	case SCSIInquiry:
		c.EVPD = b[1]&1 != 0
		c.Page = b[2]
		c.AllocationLen = uint32(be16(b[3:]))
	case SCSIModeSense6:
		c.Page, c.Subpage = b[2]&0x3f, b[3]
		c.AllocationLen = uint32(b[4])
	case SCSIModeSense10:
		c.Page, c.Subpage = b[2]&0x3f, b[3]
		c.AllocationLen = uint32(be16(b[7:]))
	case SCSIStartStopUnit:
		c.Start, c.LoadEject = b[4]&1 != 0, b[4]&2 != 0
	case SCSIPreventAllow:
		c.Prevent = b[4] & 3
	case SCSIReadFormatCapacities:
		c.AllocationLen = uint32(be16(b[7:]))
	case SCSIReadCapacity10:
		c.LBA = uint64(be32(b[2:]))
	case SCSIRead10, SCSIWrite10, SCSIVerify10, 0x2e:
		c.FUA = b[1]&0x08 != 0
		c.LBA = uint64(be32(b[2:]))
		c.Blocks = uint32(be16(b[7:]))
	case SCSISynchronizeCache10:
		c.LBA = uint64(be32(b[2:]))
		c.Blocks = uint32(be16(b[7:]))
	case SCSIRead12, SCSIWrite12:
		c.FUA = b[1]&0x08 != 0
		c.LBA = uint64(be32(b[2:]))
		c.Blocks = be32(b[6:])
	case SCSIRead16, SCSIWrite16:
		c.FUA = b[1]&0x08 != 0
		c.LBA = be64(b[2:])
		c.Blocks = be32(b[10:])
	case SCSISynchronizeCache16:
		c.LBA = be64(b[2:])
		c.Blocks = be32(b[10:])
	case SCSIServiceActionIn16:
		c.ServiceAction = b[1] & 0x1f
		c.LBA = be64(b[2:])
		c.AllocationLen = be32(b[10:])
	case SCSIReportLUNs:
		c.AllocationLen = be32(b[6:])
	case SCSIGetConfiguration, SCSIReadTOC, SCSIGetEventStatus:
		c.AllocationLen = uint32(be16(b[7:]))
	}
	return c, nil
}

func (c CDB) String() string {
	s := c.Name()
	switch c.Opcode {
	case SCSIRead6, SCSIWrite6, SCSIRead10, SCSIWrite10, SCSIVerify10, 0x2e, SCSIRead12, SCSIWrite12, SCSIRead16, SCSIWrite16,
		SCSISynchronizeCache10, SCSISynchronizeCache16:
		s += fmt.Sprintf(" lba=%d blocks=%d", c.LBA, c.Blocks)
		if c.FUA {
			s += " fua"
		}
	case SCSIInquiry:
		if c.EVPD {
			s += fmt.Sprintf(" vpd=0x%02x", c.Page)
		}
		s += fmt.Sprintf(" alloc=%d", c.AllocationLen)
	case SCSIModeSense6, SCSIModeSense10:
		s += fmt.Sprintf(" page=0x%02x subpage=0x%02x alloc=%d", c.Page, c.Subpage, c.AllocationLen)
	case SCSIRequestSense, SCSIReadFormatCapacities, SCSIReportLUNs, SCSIGetConfiguration, SCSIReadTOC, SCSIGetEventStatus:
		s += fmt.Sprintf(" alloc=%d", c.AllocationLen)
	case SCSIServiceActionIn16:
		s += fmt.Sprintf(" alloc=%d", c.AllocationLen)
	case SCSIPreventAllow:
		if c.Prevent != 0 {
			s += " prevent"
		} else {
			s += " allow"
		}
	case SCSIStartStopUnit:
		s += fmt.Sprintf(" start=%t loej=%t", c.Start, c.LoadEject)
	}
	return s
}

// Inquiry is the standard INQUIRY response (the first 36 bytes).
type Inquiry struct {
	PeripheralType uint8  `json:"peripheral_device_type"`
	Removable      bool   `json:"removable"`
	Version        uint8  `json:"version"`
	Vendor         string `json:"vendor"`
	Product        string `json:"product"`
	Revision       string `json:"revision"`
}

// ParseInquiry decodes a standard INQUIRY response. Data cut short by the
// capture is decoded as far as it goes and returned with an error wrapping
// ErrShort.
func ParseInquiry(b []byte) (Inquiry, error) {
	const what = "scsi inquiry data"
	if len(b) < 5 {
		return Inquiry{}, shortErr(what, len(b), 5, len(b))
	}
	q := Inquiry{PeripheralType: b[0] & 0x1f, Removable: b[1]&0x80 != 0, Version: b[2]}
	field := func(from, to int) string {
		if len(b) <= from {
			return ""
		}
		return strings.TrimRight(string(printable(b[from:min(to, len(b))])), " ")
	}
	q.Vendor, q.Product, q.Revision = field(8, 16), field(16, 32), field(32, 36)
	if len(b) < 36 {
		return q, shortErr(what, len(b), 36, len(b))
	}
	return q, nil
}

func printable(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '.'
		}
		out[i] = c
	}
	return out
}

var peripheralTypes = sync.OnceValue(func() map[uint8]string {
	return map[uint8]string{0: "disk", 1: "tape", 2: "printer", 3: "processor", 4: "worm", 5: "cd/dvd",
		7: "optical", 8: "changer", 0xc: "storage-array", 0xd: "enclosure", 0xe: "rbc", 0x1f: "unknown"}
})

func (q Inquiry) String() string {
	t := peripheralTypes()[q.PeripheralType]
	if t == "" {
		t = fmt.Sprintf("type-0x%02x", q.PeripheralType)
	}
	s := fmt.Sprintf("INQUIRY data: %s", t)
	if q.Removable {
		s += " removable"
	}
	return s + fmt.Sprintf(" vendor=%q product=%q rev=%q", q.Vendor, q.Product, q.Revision)
}

// Capacity is a READ CAPACITY (10) or (16) response.
type Capacity struct {
	LastLBA   uint64 `json:"last_lba"`
	BlockSize uint32 `json:"block_length"`
}

// Bytes returns the medium size in bytes.
func (c Capacity) Bytes() uint64 { return (c.LastLBA + 1) * uint64(c.BlockSize) }

// ParseCapacity10 decodes an 8-byte READ CAPACITY (10) response.
func ParseCapacity10(b []byte) (Capacity, error) {
	if len(b) < 8 {
		return Capacity{}, shortErr("read capacity(10) data", len(b), 8, len(b))
	}
	return Capacity{LastLBA: uint64(be32(b)), BlockSize: be32(b[4:])}, nil
}

// ParseCapacity16 decodes a READ CAPACITY (16) response (first 12 bytes).
func ParseCapacity16(b []byte) (Capacity, error) {
	if len(b) < 12 {
		return Capacity{}, shortErr("read capacity(16) data", len(b), 12, len(b))
	}
	return Capacity{LastLBA: be64(b), BlockSize: be32(b[8:])}, nil
}

func (c Capacity) String() string {
	return fmt.Sprintf("CAPACITY blocks=%d block_size=%d bytes=%d", c.LastLBA+1, c.BlockSize, c.Bytes())
}

// Sense is decoded sense data (fixed or descriptor format).
type Sense struct {
	ResponseCode uint8 `json:"response_code"`
	Key          uint8 `json:"sense_key"`
	ASC          uint8 `json:"asc"`
	ASCQ         uint8 `json:"ascq"`
}

// ParseSense decodes REQUEST SENSE data, fixed (0x70/0x71) or descriptor
// (0x72/0x73) format.
func ParseSense(b []byte) (Sense, error) {
	const what = "scsi sense data"
	if len(b) < 1 {
		return Sense{}, shortErr(what, 0, 1, 0)
	}
	s := Sense{ResponseCode: b[0] & 0x7f}
	switch s.ResponseCode {
	case 0x70, 0x71:
		if len(b) < 14 {
			return s, shortErr(what, len(b), 14, len(b))
		}
		s.Key, s.ASC, s.ASCQ = b[2]&0x0f, b[12], b[13]
	case 0x72, 0x73:
		if len(b) < 4 {
			return s, shortErr(what, len(b), 4, len(b))
		}
		s.Key, s.ASC, s.ASCQ = b[1]&0x0f, b[2], b[3]
	default:
		return s, invalidErr(what, 0, "response code 0x%02x", s.ResponseCode)
	}
	return s, nil
}

var senseKeys = [16]string{"NO_SENSE", "RECOVERED_ERROR", "NOT_READY", "MEDIUM_ERROR", "HARDWARE_ERROR",
	"ILLEGAL_REQUEST", "UNIT_ATTENTION", "DATA_PROTECT", "BLANK_CHECK", "VENDOR_SPECIFIC", "COPY_ABORTED",
	"ABORTED_COMMAND", "RESERVED_C", "VOLUME_OVERFLOW", "MISCOMPARE", "COMPLETED"}

var ascNames = sync.OnceValue(func() map[uint16]string {
	return map[uint16]string{
		0x0000: "no additional sense information", 0x0401: "becoming ready", 0x0402: "initializing command required",
		0x1100: "unrecovered read error", 0x2000: "invalid command operation code", 0x2100: "lba out of range",
		0x2400: "invalid field in cdb", 0x2500: "logical unit not supported", 0x2600: "invalid field in parameter list",
		0x2700: "write protected", 0x2800: "medium may have changed", 0x2900: "power on, reset, or bus device reset occurred",
		0x3a00: "medium not present", 0x3a01: "medium not present - tray closed", 0x3a02: "medium not present - tray open",
	}
})

// KeyName returns the sense key name.
func (s Sense) KeyName() string { return senseKeys[s.Key&15] }

func (s Sense) String() string {
	str := fmt.Sprintf("SENSE %s asc=0x%02x ascq=0x%02x", s.KeyName(), s.ASC, s.ASCQ)
	if n, ok := ascNames()[uint16(s.ASC)<<8|uint16(s.ASCQ)]; ok {
		str += " (" + n + ")"
	}
	return str
}

// ModeHeader is the header of a MODE SENSE (6) or (10) response.
type ModeHeader struct {
	DataLength      uint16 `json:"mode_data_length"`
	MediumType      uint8  `json:"medium_type"`
	WriteProtected  bool   `json:"write_protected"`
	BlockDescLength uint16 `json:"block_descriptor_length"`
}

// ParseModeHeader decodes the mode parameter header of a MODE SENSE
// response; ten selects the MODE SENSE (10) layout.
func ParseModeHeader(b []byte, ten bool) (ModeHeader, error) {
	if ten {
		if len(b) < 8 {
			return ModeHeader{}, shortErr("mode sense(10) header", len(b), 8, len(b))
		}
		return ModeHeader{DataLength: be16(b), MediumType: b[2], WriteProtected: b[3]&0x80 != 0, BlockDescLength: be16(b[6:])}, nil
	}
	if len(b) < 4 {
		return ModeHeader{}, shortErr("mode sense(6) header", len(b), 4, len(b))
	}
	return ModeHeader{DataLength: uint16(b[0]), MediumType: b[1], WriteProtected: b[2]&0x80 != 0, BlockDescLength: uint16(b[3])}, nil
}

func (m ModeHeader) String() string {
	return fmt.Sprintf("MODE data_length=%d medium=0x%02x write_protected=%t block_descriptors=%d",
		m.DataLength, m.MediumType, m.WriteProtected, m.BlockDescLength)
}
