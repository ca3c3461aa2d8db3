package usb

import (
	"errors"
	"testing"
)

func TestCBWFromUsbmonDoc(t *testing.T) {
	// The READ_10 example of the kernel's usbmon documentation:
	// dd65f0e8 4128379752 S Bo:1:005:2 -115 31 = 55534243 ad000000 00800000 80010a28 20000000 20000040 00000000 000000
	b := mustHex(t, "55534243ad0000000080000080010a28200000002000004000000000000000")
	if !IsCBW(b) {
		t.Fatal("not a CBW")
	}
	c, err := ParseCBW(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tag != 0xad || c.DataTransferLength != 0x8000 || !c.In() || c.LUN != 1 || c.CBLength != 10 {
		t.Errorf("%+v", c)
	}
	cdb, err := ParseCDB(c.Command())
	if err != nil {
		t.Fatal(err)
	}
	if cdb.Name() != "READ_10" || cdb.LBA != 0x20 || cdb.Blocks != 0x40 {
		t.Errorf("%+v", cdb)
	}
	if s := c.String(); s != "CBW tag=0xad lun=1 in 32768: READ_10 lba=32 blocks=64" {
		t.Errorf("%q", s)
	}
}

func TestCSW(t *testing.T) {
	c, err := ParseCSW(mustHex(t, "55534253ad0000000002000001"))
	if err != nil || c.Tag != 0xad || c.Residue != 512 || c.StatusName() != "failed" {
		t.Errorf("%+v %v", c, err)
	}
	if _, err := ParseCSW(mustHex(t, "55534253ad0000000002000007")); !errors.Is(err, ErrInvalid) {
		t.Errorf("status 7: %v", err)
	}
	if _, err := ParseCSW(mustHex(t, "55534243ad0000000002000000")); !errors.Is(err, ErrInvalid) {
		t.Errorf("CBW signature in a CSW: %v", err)
	}
	if _, err := ParseCSW(mustHex(t, "5553")); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v", err)
	}
}

func TestCDB(t *testing.T) {
	tests := []struct {
		hex  string
		want string
	}{
		{"000000000000", "TEST_UNIT_READY"},
		{"030000001200", "REQUEST_SENSE alloc=18"},
		{"120000002400", "INQUIRY alloc=36"},
		{"120180000400", "INQUIRY vpd=0x80 alloc=4"},
		{"25000000000000000000", "READ_CAPACITY_10"},
		{"9e100000000000000000000000200000", "READ_CAPACITY_16 alloc=32"},
		{"28000000000800000100", "READ_10 lba=8 blocks=1"},
		{"2a080001000000000800", "WRITE_10 lba=65536 blocks=8 fua"},
		{"a80000000010000000200000", "READ_12 lba=16 blocks=32"},
		{"aa0000000010000000200000", "WRITE_12 lba=16 blocks=32"},
		{"88000000000100000000000000080000", "READ_16 lba=4294967296 blocks=8"},
		{"8a000000000000000010000000010000", "WRITE_16 lba=16 blocks=1"},
		{"1a003f00c000", "MODE_SENSE_6 page=0x3f subpage=0x00 alloc=192"},
		{"5a003f0000000000c000", "MODE_SENSE_10 page=0x3f subpage=0x00 alloc=192"},
		{"1e0000000100", "PREVENT_ALLOW_MEDIUM_REMOVAL prevent"},
		{"1e0000000000", "PREVENT_ALLOW_MEDIUM_REMOVAL allow"},
		{"35000000000000000000", "SYNCHRONIZE_CACHE_10 lba=0 blocks=0"},
		{"1b0000000200", "START_STOP_UNIT start=false loej=true"},
		{"080000100800", "READ_6 lba=16 blocks=8"},
		{"2300000000000000fc00", "READ_FORMAT_CAPACITIES alloc=252"},
		{"c1000000000000000000", "SCSI_0xc1"},
	}
	for _, tt := range tests {
		c, err := ParseCDB(mustHex(t, tt.hex))
		if err != nil {
			t.Errorf("%s: %v", tt.hex, err)
			continue
		}
		if c.String() != tt.want {
			t.Errorf("%s: %q, want %q", tt.hex, c.String(), tt.want)
		}
	}
	if _, err := ParseCDB(mustHex(t, "2800000008")); !errors.Is(err, ErrShort) {
		t.Errorf("5-byte READ_10: %v", err)
	}
}

func TestSCSIData(t *testing.T) {
	// QEMU's scsi-disk behind usb-storage (the lab's storage device).
	inq := append(mustHex(t, "0000050212000000"), []byte("QEMU    QEMU HARDDISK   2.5+")...)
	q, err := ParseInquiry(inq)
	if err != nil || q.Vendor != "QEMU" || q.Product != "QEMU HARDDISK" || q.Revision != "2.5+" || q.PeripheralType != 0 {
		t.Errorf("%+v %v", q, err)
	}
	q, err = ParseInquiry(inq[:32]) // usbmon text keeps 32 bytes
	if !errors.Is(err, ErrShort) || q.Product != "QEMU HARDDISK" || q.Revision != "" {
		t.Errorf("cut: %+v %v", q, err)
	}
	c, err := ParseCapacity10(mustHex(t, "0001ffff00000200"))
	if err != nil || c.LastLBA != 0x1ffff || c.BlockSize != 512 || c.Bytes() != 64<<20 {
		t.Errorf("%+v %v", c, err)
	}
	c, err = ParseCapacity16(mustHex(t, "00000001000000000000100000"))
	if err != nil || c.LastLBA != 1<<32 || c.BlockSize != 4096 {
		t.Errorf("%+v %v", c, err)
	}
	s, err := ParseSense(mustHex(t, "700006000000000a00000000280000000000"))
	if err != nil || s.String() != "SENSE UNIT_ATTENTION asc=0x28 ascq=0x00 (medium may have changed)" {
		t.Errorf("%v %v", s, err)
	}
	// QEMU's MODE SENSE(6) answer (lab capture): not write protected.
	m, err := ParseModeHeader(mustHex(t, "630000080000800000000200"), false)
	if err != nil || m.DataLength != 0x63 || m.WriteProtected || m.BlockDescLength != 8 {
		t.Errorf("mode header %+v %v", m, err)
	}
	m, err = ParseModeHeader(mustHex(t, "00630080000000080000"), true)
	if err != nil || m.DataLength != 0x63 || !m.WriteProtected || m.BlockDescLength != 8 {
		t.Errorf("mode(10) header %+v %v", m, err)
	}
	s, err = ParseSense(mustHex(t, "720520000000"))
	if err != nil || s.KeyName() != "ILLEGAL_REQUEST" || s.ASC != 0x20 {
		t.Errorf("descriptor format: %v %v", s, err)
	}
}
