package intelpt

import (
	"encoding/binary"
	"io"
	"math/bits"
)

// Opcode bytes and sizes (Intel SDM, "Intel Processor Trace" packet formats).
const (
	opcPad   = 0x00
	opcExt   = 0x02
	opcMode  = 0x99
	opcTSC   = 0x19
	opcMTC   = 0x59
	opcTrig  = 0xd9
	extPSB   = 0x82
	extTNT64 = 0xa3
	extPIP   = 0x43
	extOVF   = 0xf3
	extPSBE  = 0x23
	extCBR   = 0x03
	extTMA   = 0x73
	extStop  = 0x83
	extVMCS  = 0xc8
	extExt2  = 0xc3
	extExSt  = 0x62
	extExStI = 0xe2
	extMWait = 0xc2
	extPwrE  = 0x22
	extPwrX  = 0xa2
	extCFE   = 0x13
	extEVD   = 0x53
	extBBP   = 0x63
	extBEP   = 0x33
	extBEPIP = 0xb3
	ext2MNT  = 0x88

	psbSize = 16
)

// Opcode classes of the first byte, from a constant table.
const (
	clsBad uint8 = iota
	clsPad
	clsTNT8
	clsCYC
	clsTIP
	clsPGE
	clsPGD
	clsFUP
	clsExt
	clsMode
	clsTSC
	clsMTC
	clsTrig
)

// buildOpClass builds opClass (the class of each first byte) for
// tables_gen.go: see TestTables.
func buildOpClass() (t [256]uint8) {
	for i := range t {
		b := uint8(i)
		switch {
		case b == opcPad:
			t[i] = clsPad
		case b == opcExt:
			t[i] = clsExt
		case b == opcMode:
			t[i] = clsMode
		case b == opcTSC:
			t[i] = clsTSC
		case b == opcMTC:
			t[i] = clsMTC
		case b == opcTrig:
			t[i] = clsTrig
		case b&3 == 3:
			t[i] = clsCYC
		case b&1 == 0:
			t[i] = clsTNT8
		case b&0x1f == 0x1d:
			t[i] = clsFUP
		case b&0x1f == 0x0d:
			t[i] = clsTIP
		case b&0x1f == 0x11:
			t[i] = clsPGE
		case b&0x1f == 0x01:
			t[i] = clsPGD
		}
	}
	return t
}

// Decoder decodes PT packets from a byte slice. It does not allocate while
// decoding valid packets. A Decoder is not safe for concurrent use.
type Decoder struct {
	buf   []byte
	pos   int
	sync  int // offset of the last PSB seen, -1 for none
	block uint8
	cfg   Config
}

// NewDecoder returns a decoder over buf positioned at offset 0 (as if
// synchronised there; call SyncForward to start at the first PSB instead).
// The decoder reads buf but never modifies it.
func NewDecoder(buf []byte, cfg Config) *Decoder {
	return &Decoder{buf: buf, sync: -1, cfg: cfg}
}

// Reset makes d decode buf from offset 0, keeping its configuration.
func (d *Decoder) Reset(buf []byte) {
	d.buf, d.pos, d.sync, d.block = buf, 0, -1, 0
}

// Offset returns the offset of the next packet.
func (d *Decoder) Offset() int64 { return int64(d.pos) }

// SyncOffset returns the offset of the last PSB the decoder synchronised on
// or decoded, or -1.
func (d *Decoder) SyncOffset() int64 { return int64(d.sync) }

// Config returns the decoder's configuration.
func (d *Decoder) Config() Config { return d.cfg }

// SetOffset moves the decoder to off (0 <= off <= len(buf)) and treats it as
// a synchronisation point.
func (d *Decoder) SetOffset(off int64) error {
	if off < 0 || off > int64(len(d.buf)) {
		return decodeErr(int(max(off, 0)), ErrTruncated)
	}
	d.pos, d.sync, d.block = int(off), int(off), 0
	return nil
}

// Next decodes the packet at the current offset into p and advances past it.
// It returns io.EOF at the end of the trace and a *DecodeError for bad input;
// after an error the offset is unchanged: call SyncForward to resynchronise.
func (d *Decoder) Next(p *Packet) error {
	pos := d.pos
	buf := d.buf
	// Fast path: the frequent fixed-layout packets (TNT-8, PAD, short CYC,
	// TIP/FUP family, MTC) come from a table without branching on the
	// kind; the payload is the next 8 bytes masked.
	if uint(pos)+9 <= uint(len(buf)) && d.block == 0 {
		e := &fastOps[buf[pos]]
		if e.size != 0 {
			w := binary.LittleEndian.Uint64(buf[pos+1:])
			*p = Packet{Kind: e.kind, Size: e.size, IPC: e.ipc, Bits: e.bits, Payload: e.payload | w&e.mask}
			d.pos = pos + int(e.size)
			return nil
		}
	}
	if uint(pos) >= uint(len(buf)) {
		return io.EOF
	}
	b := buf[pos]
	if d.block != 0 && b&7 == 4 {
		return d.bip(p, b, pos)
	}
	switch c := opClass[b]; c {
	case clsTNT8:
		v := uint64(b >> 1)
		n := uint8(bits.Len64(v) - 1)
		*p = Packet{Kind: KindTNT8, Size: 1, Bits: n, Payload: v &^ (1 << n)}
		d.pos = pos + 1
		return nil
	case clsTIP, clsPGE, clsPGD, clsFUP:
		ipc := b >> 5
		sz := int(ipcSize[ipc])
		rest := buf[pos+1:]
		if sz < 0 || len(rest) < sz {
			return d.ipErr(pos, sz)
		}
		*p = Packet{Kind: ipKind[(c-clsTIP)&3], Size: uint8(1 + sz), IPC: IPC(ipc), Payload: le(rest[:sz])}
		d.pos = pos + 1 + sz
		return nil
	case clsPad:
		*p = Packet{Kind: KindPad, Size: 1}
		d.pos = pos + 1
		return nil
	case clsCYC:
		return d.cyc(p, buf[pos:], pos)
	case clsMTC:
		if len(buf)-pos < 2 {
			return decodeErr(pos, ErrTruncated)
		}
		*p = Packet{Kind: KindMTC, Size: 2, Payload: uint64(buf[pos+1])}
		d.pos = pos + 2
		return nil
	}
	return d.other(p, b, pos)
}

// fastOp describes a packet whose kind and size follow from its first
// byte and whose payload is in the following bytes: payload | next8&mask.
type fastOp struct {
	payload, mask uint64
	kind          Kind
	size, bits    uint8
	ipc           IPC
	timing        bool // a packet TimeTracker.Update reads (CYC, MTC)
}

// buildFastOps builds fastOps (the packets decoded from their first
// byte alone) for tables_gen.go: see TestTables.
func buildFastOps() (t [256]fastOp) {
	for i := range t {
		b := uint8(i)
		switch opClass[b] {
		case clsTNT8:
			v := uint64(b >> 1)
			n := uint8(bits.Len64(v) - 1)
			t[i] = fastOp{kind: KindTNT8, size: 1, bits: n, payload: v &^ (1 << n)}
		case clsPad:
			t[i] = fastOp{kind: KindPad, size: 1}
		case clsCYC:
			if b&4 == 0 {
				t[i] = fastOp{kind: KindCYC, size: 1, payload: uint64(b >> 3), timing: true}
			}
		case clsMTC:
			t[i] = fastOp{kind: KindMTC, size: 2, mask: 0xff, timing: true}
		case clsTIP, clsPGE, clsPGD, clsFUP:
			sz := ipcSize[b>>5]
			if sz < 0 {
				continue
			}
			var mask uint64
			if sz == 8 {
				mask = ^uint64(0)
			} else {
				mask = 1<<(8*uint(sz)) - 1
			}
			t[i] = fastOp{kind: ipKind[opClass[b]-clsTIP], size: uint8(1 + sz), ipc: IPC(b >> 5), mask: mask}
		}
	}
	return t
}

func (d *Decoder) ipErr(pos, sz int) error {
	if sz < 0 {
		return decodeErr(pos, ErrBadPacket)
	}
	return decodeErr(pos, ErrTruncated)
}

func (d *Decoder) bip(p *Packet, b byte, pos int) error {
	rest := d.buf[pos:]
	n := int(d.block) + 1
	if len(rest) < n {
		return decodeErr(pos, ErrTruncated)
	}
	*p = Packet{Kind: KindBIP, Size: uint8(n), Type: b >> 3, Bits: d.block, Payload: le(rest[1:n])}
	d.pos = pos + n
	return nil
}

// other decodes the less frequent packets.
func (d *Decoder) other(p *Packet, b byte, pos int) error {
	rest := d.buf[pos:]
	switch opClass[b] {
	case clsMode:
		if len(rest) < 2 {
			return decodeErr(pos, ErrTruncated)
		}
		m := rest[1]
		switch m & 0xe0 {
		case 0x00:
			*p = Packet{Kind: KindModeExec, Size: 2, Flags: Flags(m&1)*FlagCSL | Flags(m>>1&1)*FlagCSD | Flags(m>>2&1)*FlagIF}
		case 0x20:
			*p = Packet{Kind: KindModeTSX, Size: 2, Flags: Flags(m&1)*FlagInTX | Flags(m>>1&1)*FlagAbort}
		default:
			return decodeErr(pos, ErrBadPacket)
		}
		d.pos = pos + 2
		return nil
	case clsTSC:
		if len(rest) < 8 {
			return decodeErr(pos, ErrTruncated)
		}
		*p = Packet{Kind: KindTSC, Size: 8, Payload: binary.LittleEndian.Uint64(rest) >> 8}
		d.pos = pos + 8
		return nil
	case clsTrig:
		return d.trig(p, rest, pos)
	case clsExt:
		return d.ext(p, rest, pos)
	}
	return decodeErr(pos, ErrBadOpcode)
}

// le reads a little-endian value of len(b) <= 8 bytes.
func le(b []byte) uint64 {
	if len(b) == 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// tntBits returns the index of the stop bit (the highest set bit) of v > 0.
func tntBits(v uint64) uint8 {
	return uint8(bits.Len64(v) - 1)
}

// ipKind maps the IP packet classes (in order) to kinds.
var ipKind = [4]Kind{KindTIP, KindTIPPGE, KindTIPPGD, KindFUP}

func (d *Decoder) cyc(p *Packet, rest []byte, pos int) error {
	b := rest[0]
	v := uint64(b >> 3)
	n := 1
	shift := uint(5)
	ext := b&4 != 0
	for ext {
		if n >= len(rest) {
			return decodeErr(pos, ErrTruncated)
		}
		x := rest[n]
		n++
		ext = x&1 != 0
		if shift >= 64 {
			return decodeErr(pos, ErrBadPacket)
		}
		v |= uint64(x>>1) << shift
		shift += 7
		if shift > 64 {
			return decodeErr(pos, ErrBadPacket)
		}
	}
	*p = Packet{Kind: KindCYC, Size: uint8(n), Payload: v}
	if d.cfg.Errata.SKD007 && n == 2 && v&^0x1f == 0x20 && len(rest) > 2 && rest[2] == extOVF {
		// SKD007: an OVF may be preceded by a bogus 2-byte CYC whose second
		// byte looks like the ext opcode; report the OVF instead.
		*p = Packet{Kind: KindOVF, Size: 2}
		d.pos = pos + 1 + 2
		return nil
	}
	d.pos = pos + n
	return nil
}

func (d *Decoder) trig(p *Packet, rest []byte, pos int) error {
	if len(rest) < 3 {
		return decodeErr(pos, ErrTruncated)
	}
	f := rest[1]
	q := Packet{Kind: KindTrig, Size: 3, Type: rest[2]}
	if f&0x80 != 0 {
		q.Flags |= FlagIP
	}
	if f&0x20 != 0 {
		q.Flags |= FlagMult
	}
	if f&0x40 != 0 {
		if len(rest) < 5 {
			return decodeErr(pos, ErrTruncated)
		}
		q.Flags |= FlagICNTValid
		q.Aux = uint32(binary.LittleEndian.Uint16(rest[3:]))
		q.Size = 5
	}
	*p = q
	d.pos = pos + int(q.Size)
	return nil
}

func (d *Decoder) ext(p *Packet, rest []byte, pos int) error {
	if len(rest) < 2 {
		return decodeErr(pos, ErrTruncated)
	}
	e := rest[1]
	var q Packet
	switch e {
	case extPSB:
		if len(rest) < psbSize {
			return decodeErr(pos, ErrTruncated)
		}
		if !isPSB(rest) {
			return decodeErr(pos, ErrBadPacket)
		}
		d.sync = pos
		d.block = 0
		q = Packet{Kind: KindPSB, Size: psbSize}
	case extPSBE:
		q = Packet{Kind: KindPSBEnd, Size: 2}
	case extOVF:
		d.block = 0
		q = Packet{Kind: KindOVF, Size: 2}
	case extStop:
		q = Packet{Kind: KindTraceStop, Size: 2}
	case extTNT64:
		if len(rest) < 8 {
			return decodeErr(pos, ErrTruncated)
		}
		v := le(rest[2:8])
		if v == 0 {
			return decodeErr(pos, ErrBadPacket)
		}
		bits := tntBits(v)
		q = Packet{Kind: KindTNT64, Size: 8, Bits: bits, Payload: v &^ (1 << bits)}
	case extPIP:
		if len(rest) < 8 {
			return decodeErr(pos, ErrTruncated)
		}
		v := le(rest[2:8])
		q = Packet{Kind: KindPIP, Size: 8, Payload: v >> 1 << 5}
		if v&1 != 0 {
			q.Flags = FlagNR
		}
	case extCBR:
		if len(rest) < 4 {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindCBR, Size: 4, Payload: uint64(rest[2])}
	case extTMA:
		if len(rest) < 7 {
			return decodeErr(pos, ErrTruncated)
		}
		fc := binary.LittleEndian.Uint16(rest[5:])
		if fc&^0x1ff != 0 || rest[4] != 0 {
			if d.cfg.Errata.SKZ84 {
				// SKZ84: TSC scaling/offsetting corrupts TMA; report an
				// invalid packet and skip it together with one more byte.
				q = Packet{Kind: KindInvalid, Size: 8}
				if len(rest) < 8 {
					return decodeErr(pos, ErrTruncated)
				}
				break
			}
			return decodeErr(pos, ErrBadPacket)
		}
		q = Packet{Kind: KindTMA, Size: 7, Payload: uint64(binary.LittleEndian.Uint16(rest[2:])), Aux: uint32(fc)}
	case extVMCS:
		if len(rest) < 7 {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindVMCS, Size: 7, Payload: le(rest[2:7]) << 12}
	case extExSt, extExStI:
		q = Packet{Kind: KindExStop, Size: 2}
		if e&0x80 != 0 {
			q.Flags = FlagIP
		}
	case extMWait:
		if len(rest) < 10 {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindMWait, Size: 10, Payload: uint64(binary.LittleEndian.Uint32(rest[2:])), Aux: binary.LittleEndian.Uint32(rest[6:])}
	case extPwrE:
		if len(rest) < 4 {
			return decodeErr(pos, ErrTruncated)
		}
		v := binary.LittleEndian.Uint16(rest[2:])
		q = Packet{Kind: KindPwrE, Size: 4, Type: uint8(v >> 12 & 0xf), Sub: uint8(v >> 8 & 0xf)}
		if v&0x8 != 0 {
			q.Flags = FlagHW
		}
	case extPwrX:
		if len(rest) < 7 {
			return decodeErr(pos, ErrTruncated)
		}
		v := le(rest[2:7])
		q = Packet{Kind: KindPwrX, Size: 7, Type: uint8(v >> 4 & 0xf), Sub: uint8(v & 0xf)}
		if v&0x100 != 0 {
			q.Flags |= FlagInterrupt
		}
		if v&0x400 != 0 {
			q.Flags |= FlagStore
		}
		if v&0x800 != 0 {
			q.Flags |= FlagAutonomous
		}
	case extCFE:
		if len(rest) < 4 {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindCFE, Size: 4, Type: rest[2] & 0x1f, Aux: uint32(rest[3])}
		if rest[2]&0x80 != 0 {
			q.Flags = FlagIP
		}
	case extEVD:
		if len(rest) < 11 {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindEVD, Size: 11, Type: rest[2] & 0x1f, Payload: binary.LittleEndian.Uint64(rest[3:])}
	case extBBP:
		if d.cfg.IgnoreBlocks {
			return decodeErr(pos, ErrBadOpcode)
		}
		if len(rest) < 3 {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindBBP, Size: 3, Type: rest[2] & 0x1f}
		d.block = 8
		if rest[2]&0x80 != 0 {
			q.Flags = FlagBlock4
			d.block = 4
		}
	case extBEP, extBEPIP:
		if d.cfg.IgnoreBlocks {
			return decodeErr(pos, ErrBadOpcode)
		}
		d.block = 0
		q = Packet{Kind: KindBEP, Size: 2}
		if e&0x80 != 0 {
			q.Flags = FlagIP
		}
	case extExt2:
		if len(rest) < 3 {
			return decodeErr(pos, ErrTruncated)
		}
		if rest[2] != ext2MNT {
			return decodeErr(pos, ErrBadOpcode)
		}
		if len(rest) < 11 {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindMNT, Size: 11, Payload: binary.LittleEndian.Uint64(rest[3:])}
	default:
		if e&0x1f != 0x12 { // PTW
			return decodeErr(pos, ErrBadOpcode)
		}
		plc := e >> 5 & 3
		var sz int
		switch plc {
		case 0:
			sz = 4
		case 1:
			sz = 8
		default:
			return decodeErr(pos, ErrBadPacket)
		}
		if len(rest) < 2+sz {
			return decodeErr(pos, ErrTruncated)
		}
		q = Packet{Kind: KindPTW, Size: uint8(2 + sz), Bits: plc, Payload: le(rest[2 : 2+sz])}
		if e&0x80 != 0 {
			q.Flags = FlagIP
		}
	}
	*p = q
	d.pos = pos + int(q.Size)
	return nil
}

// isPSB reports whether b starts with a complete PSB packet.
func isPSB(b []byte) bool {
	if len(b) < psbSize {
		return false
	}
	for i := 0; i < psbSize; i += 2 {
		if b[i] != opcExt || b[i+1] != extPSB {
			return false
		}
	}
	return true
}
