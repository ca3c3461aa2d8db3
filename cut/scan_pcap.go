package cut

import (
	"encoding/binary"
	"io"
	"math/bits"
	"strconv"
)

// pcapScanner reads pcap files of any link type.
type pcapScanner struct {
	base
	bo      binary.ByteOrder
	nano    bool
	lt      uint32
	snaplen uint32
	src     []byte
}

func (s *pcapScanner) reset(r io.Reader, off int64, _ int64) { s.base.reset(r, off) }

const maxPcapRecord = 256 << 20

func (s *pcapScanner) next(u *unit) ([]byte, error) {
	off := s.off
	if s.bo == nil {
		h, err := s.block(24)
		if err != nil {
			return nil, err
		}
		switch binary.LittleEndian.Uint32(h) {
		case 0xa1b2c3d4:
			s.bo, s.nano = binary.LittleEndian, false
		case 0xa1b23c4d:
			s.bo, s.nano = binary.LittleEndian, true
		case 0xd4c3b2a1:
			s.bo, s.nano = binary.BigEndian, false
		case 0x4d3cb2a1:
			s.bo, s.nano = binary.BigEndian, true
		default:
			return nil, s.errf(off, "not a pcap header (magic %x)", h[:4])
		}
		s.snaplen, s.lt = s.bo.Uint32(h[16:]), s.bo.Uint32(h[20:])&0x0fffffff
		*u = unit{kind: kindHeader}
		return h, nil
	}
	h, err := s.peek(16)
	if len(h) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	if len(h) < 16 {
		if err != nil && err != io.EOF {
			return nil, err
		}
		return nil, s.truncf(off, "record header cut short (%d bytes)", len(h))
	}
	caplen := s.bo.Uint32(h[8:])
	if caplen > maxPcapRecord {
		return nil, s.errf(off, "record of %d bytes", caplen)
	}
	sec, frac := int64(s.bo.Uint32(h)), int64(s.bo.Uint32(h[4:]))
	if !s.nano {
		frac *= 1000
	}
	rec, err := s.block(16 + int(caplen))
	if err != nil {
		return nil, err
	}
	*u = unit{kind: kindEvent, timed: true, t: sec*1e9 + frac}
	u.src = usbmonSource(s.src[:0], s.lt, rec[16:], s.bo)
	s.src = u.src
	return rec, nil
}

// usbmonSource is the source key of a packet: bus:device for usbmon
// link types (189, 220), else "lt" and the link type.
func usbmonSource(dst []byte, lt uint32, pkt []byte, bo binary.ByteOrder) []byte {
	if (lt == 189 || lt == 220) && len(pkt) >= 14 {
		dst = strconv.AppendUint(dst, uint64(bo.Uint16(pkt[12:])), 10)
		dst = append(dst, ':')
		d := pkt[11]
		dst = append(dst, '0'+d/100, '0'+d/10%10, '0'+d%10)
		return dst
	}
	dst = append(dst, "lt"...)
	return strconv.AppendUint(dst, uint64(lt), 10)
}

// pcapngScanner reads pcapng files of any link type, block by block.
type pcapngScanner struct {
	base
	bo  binary.ByteOrder
	ifs []ngIface
	src []byte
	// baseline statistics per interface of the current section:
	// option code -> value.
	basel   []map[uint16]uint64
	out     []byte
	section int // sections seen
}

type ngIface struct {
	lt       uint16
	tsresol  uint8
	tsoffset int64
}

const (
	ngSHB = 0x0a0d0d0a
	ngIDB = 1
	ngPB  = 2
	ngSPB = 3
	ngISB = 5
	ngEPB = 6

	maxNgBlock = 256 << 20
)

func (s *pcapngScanner) reset(r io.Reader, off int64, _ int64) { s.base.reset(r, off) }

func (s *pcapngScanner) next(u *unit) ([]byte, error) {
	off := s.off
	h, err := s.peek(12)
	if len(h) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	if len(h) < 12 {
		if err != nil && err != io.EOF {
			return nil, err
		}
		return nil, s.truncf(off, "block header cut short (%d bytes)", len(h))
	}
	typ := binary.LittleEndian.Uint32(h)
	if typ == ngSHB {
		switch binary.LittleEndian.Uint32(h[8:]) {
		case 0x1a2b3c4d:
			s.bo = binary.LittleEndian
		case 0x4d3c2b1a:
			s.bo = binary.BigEndian
		default:
			return nil, s.errf(off, "bad byte-order magic %x", h[8:12])
		}
	} else if s.bo == nil {
		return nil, s.errf(off, "block before the first section header")
	} else {
		typ = s.bo.Uint32(h)
	}
	n := s.bo.Uint32(h[4:])
	if n < 12 || n%4 != 0 || n > maxNgBlock {
		return nil, s.errf(off, "bad block length %d", n)
	}
	blk, err := s.block(int(n))
	if err != nil {
		return nil, err
	}
	if s.bo.Uint32(blk[n-4:]) != n {
		return nil, s.errf(off, "block length %d, trailing length %d", n, s.bo.Uint32(blk[n-4:]))
	}
	*u = unit{kind: kindHeader}
	switch typ {
	case ngSHB:
		s.section++
		s.ifs = s.ifs[:0]
		s.basel = s.basel[:0]
	case ngIDB:
		if n < 20 {
			return nil, s.errf(off, "interface block of %d bytes", n)
		}
		ifc := ngIface{lt: s.bo.Uint16(blk[8:]), tsresol: 6}
		s.options(blk[16:n-4], func(code uint16, v []byte) {
			switch {
			case code == 9 && len(v) >= 1:
				ifc.tsresol = v[0]
			case code == 14 && len(v) >= 8:
				ifc.tsoffset = int64(s.bo.Uint64(v))
			}
		})
		s.ifs = append(s.ifs, ifc)
		s.basel = append(s.basel, nil)
	case ngEPB, ngPB, ngISB:
		if n < 24 || (typ != ngISB && n < 32) {
			return nil, s.errf(off, "block of type %d and %d bytes", typ, n)
		}
		id := uint32(s.bo.Uint16(blk[8:]))
		if typ != ngPB {
			id = s.bo.Uint32(blk[8:])
		}
		if int(id) >= len(s.ifs) {
			return nil, s.errf(off, "block of type %d names interface %d of %d", typ, id, len(s.ifs))
		}
		ts := uint64(s.bo.Uint32(blk[12:]))<<32 | uint64(s.bo.Uint32(blk[16:]))
		t, ok := s.ifs[id].ns(ts)
		u.kind, u.timed, u.t = kindEvent, ok, t
		if typ == ngISB {
			u.kind = kindStats
			s.src = append(s.src[:0], "if"...)
			s.src = strconv.AppendUint(s.src, uint64(id), 10)
			u.src = s.src
		} else {
			capl := s.bo.Uint32(blk[20:])
			pkt := blk[28:]
			if typ == ngPB {
				capl = s.bo.Uint32(blk[20:])
			}
			if uint64(capl) <= uint64(len(pkt)) {
				pkt = pkt[:capl]
			}
			u.src = usbmonSource(s.src[:0], uint32(s.ifs[id].lt), pkt, s.bo)
			s.src = u.src
		}
	case ngSPB:
		u.kind = kindEvent
		if len(s.ifs) > 0 {
			u.src = usbmonSource(s.src[:0], uint32(s.ifs[0].lt), blk[12:n-4], s.bo)
			s.src = u.src
		}
	}
	return blk, nil
}

// options calls fn for each option of an options area.
func (s *pcapngScanner) options(b []byte, fn func(code uint16, v []byte)) {
	for len(b) >= 4 {
		code, l := s.bo.Uint16(b), int(s.bo.Uint16(b[2:]))
		if code == 0 || 4+l > len(b) {
			return
		}
		fn(code, b[4:4+l])
		b = b[4+(l+3)&^3:]
	}
}

// ns converts a timestamp in the interface's units to ns since the epoch.
func (f ngIface) ns(ts uint64) (int64, bool) {
	var ns uint64
	if f.tsresol&0x80 == 0 {
		k := int(f.tsresol)
		switch {
		case k <= 9:
			hi, lo := bits.Mul64(ts, pow10(9-k))
			if hi != 0 {
				return 0, false
			}
			ns = lo
		case k <= 19:
			ns = ts / pow10(k-9)
		default:
			return 0, false
		}
	} else {
		k := uint(f.tsresol & 0x7f)
		hi, lo := bits.Mul64(ts, 1e9)
		switch {
		case k == 0:
			if hi != 0 {
				return 0, false
			}
			ns = lo
		case k < 64:
			if hi>>k != 0 {
				return 0, false
			}
			ns = lo>>k | hi<<(64-k)
		default:
			ns = hi >> (k - 64)
		}
	}
	if ns > 1<<63-1 {
		return 0, false
	}
	t := int64(ns)
	if off := f.tsoffset; off != 0 {
		if off > 1<<33 || off < -(1<<33) {
			return 0, false
		}
		t += off * 1e9
	}
	return t, true
}

func pow10(k int) uint64 {
	p := uint64(1)
	for ; k > 0; k-- {
		p *= 10
	}
	return p
}

// ISB counters (cumulative since the capture start): isb_ifrecv,
// isb_ifdrop, isb_filteraccept, isb_osdrop, isb_usrdeliv.
func isbCounter(code uint16) bool { return code >= 4 && code <= 8 }

func (s *pcapngScanner) isbID(raw []byte) (int, bool) {
	id := int(s.bo.Uint32(raw[8:]))
	return id, id < len(s.basel)
}

func (s *pcapngScanner) baseline(raw []byte) {
	id, ok := s.isbID(raw)
	if !ok {
		return
	}
	m := map[uint16]uint64{}
	s.options(raw[20:len(raw)-4], func(code uint16, v []byte) {
		if isbCounter(code) && len(v) == 8 {
			m[code] = s.bo.Uint64(v)
		}
	})
	s.basel[id] = m
}

func (s *pcapngScanner) relative(raw []byte) ([]byte, int, uint64) {
	id, ok := s.isbID(raw)
	if !ok {
		return raw, -1, 0
	}
	key := s.section<<32 | id
	if s.basel[id] == nil {
		return raw, key, isbDrops(raw, s.bo)
	}
	s.out = append(s.out[:0], raw...)
	opts := s.out[20 : len(s.out)-4]
	for len(opts) >= 4 {
		code, l := s.bo.Uint16(opts), int(s.bo.Uint16(opts[2:]))
		if code == 0 || 4+l > len(opts) {
			break
		}
		if b, ok := s.basel[id][code]; ok && isbCounter(code) && l == 8 {
			v := s.bo.Uint64(opts[4:])
			if v >= b {
				v -= b
			}
			s.bo.PutUint64(opts[4:], v)
		}
		opts = opts[4+(l+3)&^3:]
	}
	return s.out, key, isbDrops(s.out, s.bo)
}

// isbDrops returns isb_ifdrop of an interface statistics block.
func isbDrops(raw []byte, bo binary.ByteOrder) uint64 {
	opts := raw[20 : len(raw)-4]
	for len(opts) >= 4 {
		code, l := bo.Uint16(opts), int(bo.Uint16(opts[2:]))
		if code == 0 || 4+l > len(opts) {
			break
		}
		if code == 5 && l == 8 {
			return bo.Uint64(opts[4:])
		}
		opts = opts[4+(l+3)&^3:]
	}
	return 0
}
