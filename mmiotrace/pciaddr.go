package mmiotrace

import (
	"errors"
	"fmt"
)

// PCIAddr is a PCI device address, domain:bus:device.function.
type PCIAddr struct {
	Domain uint16
	Bus    uint8
	Dev    uint8 // 0..31
	Fn     uint8 // 0..7
}

// String formats the address as sysfs does: "0000:00:04.0".
func (a PCIAddr) String() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", a.Domain, a.Bus, a.Dev, a.Fn)
}

// DevFn returns the device and function as one byte (Dev<<3 | Fn).
func (a PCIAddr) DevFn() uint8 { return a.Dev<<3 | a.Fn }

// ErrBadPCIAddr is wrapped by ParsePCIAddr's errors.
var ErrBadPCIAddr = errors.New("bad PCI address")

// ParsePCIAddr parses a PCI address strictly: exactly "DDDD:BB:DD.F" (the
// sysfs form, lower- or upper-case hex) or "BB:DD.F" (domain 0). Nothing
// else is accepted, so the result can safely name a sysfs path.
func ParsePCIAddr(s string) (PCIAddr, error) {
	var a PCIAddr
	t := s
	if len(t) == 12 {
		if t[4] != ':' {
			return a, fmt.Errorf("%w %q: want DDDD:BB:DD.F", ErrBadPCIAddr, s)
		}
		d, ok := hexN(t[:4])
		if !ok {
			return a, fmt.Errorf("%w %q: bad domain", ErrBadPCIAddr, s)
		}
		a.Domain = uint16(d)
		t = t[5:]
	}
	if len(t) != 7 || t[2] != ':' || t[5] != '.' {
		return PCIAddr{}, fmt.Errorf("%w %q: want DDDD:BB:DD.F", ErrBadPCIAddr, s)
	}
	b, ok1 := hexN(t[0:2])
	d, ok2 := hexN(t[3:5])
	f, ok3 := hexN(t[6:7])
	if !ok1 || !ok2 || !ok3 || d > 31 || f > 7 {
		return PCIAddr{}, fmt.Errorf("%w %q: bus, device (<=1f) or function (<=7) out of range", ErrBadPCIAddr, s)
	}
	a.Bus, a.Dev, a.Fn = uint8(b), uint8(d), uint8(f)
	return a, nil
}

func hexN(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
