package usbmon

import (
	"bufio"
	"errors"
)

func isPcapMagic(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	m := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	switch m {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		return true
	}
	return false
}

func newPcapReader(br *bufio.Reader) (Reader, error) {
	return nil, errors.New("usbmon: pcap reading not implemented yet")
}

func newPcapngReader(br *bufio.Reader) (Reader, error) {
	return nil, errors.New("usbmon: pcapng reading not implemented yet")
}
