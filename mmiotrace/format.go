package mmiotrace

import (
	"fmt"
	"strconv"
)

const hexDigits = "0123456789abcdef"

func appendHex0x(b []byte, v uint64) []byte {
	return strconv.AppendUint(append(b, '0', 'x'), v, 16)
}

func appendInt(b []byte, v int32) []byte { return strconv.AppendInt(b, int64(v), 10) }

func appendHexN(b []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, hexDigits[(v>>(4*uint(i)))&0xf])
	}
	return b
}

// AppendRecord appends r formatted as a log line, newline included,
// exactly as the kernel prints it. Records of an invalid kind append
// nothing but the newline; Writer.Write reports them as errors.
func AppendRecord(b []byte, r *Record) []byte {
	switch r.Kind {
	case KindRead, KindWrite:
		if r.Kind == KindRead {
			b = append(b, 'R', ' ')
		} else {
			b = append(b, 'W', ' ')
		}
		b = strconv.AppendUint(b, uint64(r.Width), 10)
		b = append(b, ' ')
		b = r.Time.AppendTo(b)
		b = append(b, ' ')
		b = appendInt(b, r.MapID)
		b = append(b, ' ')
		b = appendHex0x(b, r.Phys)
		b = append(b, ' ')
		b = appendHex0x(b, r.Value)
		b = append(b, ' ')
		b = appendHex0x(b, r.PC)
		b = append(b, ' ')
		b = appendInt(b, r.PID)
	case KindMap:
		b = append(b, "MAP "...)
		b = r.Time.AppendTo(b)
		b = append(b, ' ')
		b = appendInt(b, r.MapID)
		b = append(b, ' ')
		b = appendHex0x(b, r.Phys)
		b = append(b, ' ')
		b = appendHex0x(b, r.Virt)
		b = append(b, ' ')
		b = appendHex0x(b, r.Len)
		b = append(b, ' ')
		b = appendHex0x(b, r.PC)
		b = append(b, ' ')
		b = appendInt(b, r.PID)
	case KindUnmap:
		b = append(b, "UNMAP "...)
		b = r.Time.AppendTo(b)
		b = append(b, ' ')
		b = appendInt(b, r.MapID)
		b = append(b, ' ')
		b = appendHex0x(b, r.PC)
		b = append(b, ' ')
		b = appendInt(b, r.PID)
	case KindUnknown:
		b = append(b, "UNKNOWN "...)
		b = r.Time.AppendTo(b)
		b = append(b, ' ')
		b = appendInt(b, r.MapID)
		b = append(b, ' ')
		b = appendHex0x(b, r.Phys)
		b = append(b, ' ')
		for k, o := range r.Opcode {
			b = appendHexN(b, uint64(o), 2)
			if k < 2 {
				b = append(b, ',')
			}
		}
		b = append(b, ' ')
		b = appendHex0x(b, r.PC)
		b = append(b, ' ')
		b = appendInt(b, r.PID)
	case KindMark:
		b = append(b, "MARK "...)
		b = r.Time.AppendTo(b)
		b = append(b, ' ')
		b = append(b, r.Text...)
	case KindVersion:
		b = append(b, "VERSION "...)
		b = append(b, r.Text...)
	case KindLSPCI:
		b = append(b, "LSPCI "...)
		b = append(b, r.Text...)
	case KindPCIDev:
		p := &r.PCI
		b = append(b, "PCIDEV "...)
		b = appendHexN(b, uint64(p.Bus), 2)
		b = appendHexN(b, uint64(p.DevFn), 2)
		b = append(b, ' ')
		b = appendHexN(b, uint64(p.Vendor), 4)
		b = appendHexN(b, uint64(p.Device), 4)
		b = append(b, ' ')
		b = strconv.AppendUint(b, p.IRQ, 16)
		for _, v := range p.Base {
			b = strconv.AppendUint(append(b, ' '), v, 16)
		}
		for _, v := range p.Size {
			b = strconv.AppendUint(append(b, ' '), v, 16)
		}
		if len(p.Driver) > 0 || !p.NoTrailingSpace {
			b = append(b, ' ')
			b = append(b, p.Driver...)
		}
	case KindComment, KindOther:
		b = append(b, r.Text...)
	}
	return append(b, '\n')
}

// checkRecord reports records that AppendRecord cannot print faithfully.
func checkRecord(r *Record) error {
	switch r.Kind {
	case KindInvalid:
		return fmt.Errorf("mmiotrace: write: record has no kind")
	case KindRead, KindWrite:
		if r.Width != 1 && r.Width != 2 && r.Width != 4 && r.Width != 8 {
			return fmt.Errorf("mmiotrace: write: bad width %d", r.Width)
		}
	}
	if r.Kind >= numKinds {
		return fmt.Errorf("mmiotrace: write: bad kind %d", r.Kind)
	}
	return nil
}
