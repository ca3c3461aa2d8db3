package usbmon

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// pcapngReader reads pcapng files whose interfaces have link type 189 or
// 220. It parses the blocks itself (pcapgo writes them) so that packets are
// not copied out of its buffer, every error has the byte offset of its
// block, and each section's byte order applies to its usbmon headers.
type pcapngReader struct {
	br     *bufio.Reader
	off    int64 // offset of the next block
	bo     binary.ByteOrder
	be     bool      // bo is big endian (the calls below inline, bo's do not)
	ord    byteOrder // bo for decodeRecordOrder
	lts    []uint16  // link type per interface of the section
	snaps  []uint32
	drops  []uint64 // last isb_ifdrop per interface of the section
	dropsB uint64   // drops of the previous sections
	n      int
	lt     int
	big    []byte // blocks larger than the buffer
	// win is what br had buffered when last looked at, used how much of
	// it the blocks returned since took: they are discarded from br all
	// at once when win runs out (one Peek and one Discard per buffer
	// instead of per block).
	win  []byte
	used int
	iso  []ISODesc
}

const (
	ngSHB = 0x0a0d0d0a
	ngIDB = 1
	ngPB  = 2 // obsolete packet block
	ngSPB = 3
	ngISB = 5
	ngEPB = 6

	ngMaxBlock = maxRecord + 4096
	// ngFast is how much of the window ReadInto's fast path reads as an
	// array: an enhanced packet block's 28 bytes of fields and a 64-byte
	// usbmon header.
	ngFast = 28 + HeaderLen64
)

func newPcapngReader(br *bufio.Reader, head []byte) (Reader, error) {
	r := &pcapngReader{br: br, iso: make([]ISODesc, 0, 8)}
	blk, err := r.block()
	if err != nil {
		return nil, err
	}
	if r.typ(blk) != ngSHB {
		return nil, r.errf(0, ErrFormat, "no section header block")
	}
	return r, nil
}

func (r *pcapngReader) Format() Format { return FormatPcapng }
func (r *pcapngReader) LinkType() int  { return r.lt }

// Dropped returns the events the kernel dropped as the file records them
// (isb_ifdrop of the last statistics block of each interface, summed).
func (r *pcapngReader) Dropped() uint64 {
	t := r.dropsB
	for _, d := range r.drops {
		t += d
	}
	return t
}

func (r *pcapngReader) errf(off int64, sentinel error, format string, args ...any) error {
	return &FormatError{Format: FormatPcapng, Offset: off, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (r *pcapngReader) typ(blk []byte) uint32 {
	t := binary.LittleEndian.Uint32(blk)
	if t == ngSHB {
		return t
	}
	return r.u32(blk)
}

// u16, u32 and u64 read in the section's byte order.
func (r *pcapngReader) u16(b []byte) uint16 {
	if r.be {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *pcapngReader) u32(b []byte) uint32 {
	if r.be {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// block returns the next whole block (valid until the next call) and
// handles section headers. It returns io.EOF at a clean end.
func (r *pcapngReader) block() ([]byte, error) {
	// Fast path: a whole, well-formed block other than a section header
	// already in the buffer (almost every block); anything else takes the
	// checked path below, which reports what is wrong.
	if blk := r.fromWindow(); blk != nil {
		return blk, nil
	}
	if r.used > 0 {
		r.br.Discard(r.used)
	}
	r.win, r.used = nil, 0
	if n := r.br.Buffered(); n >= 12 && r.bo != nil {
		r.win, _ = r.br.Peek(n)
		if blk := r.fromWindow(); blk != nil {
			return blk, nil
		}
		r.win = nil
	}
	off := r.off
	h, err := r.br.Peek(12)
	if len(h) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	if len(h) < 12 && isIOError(err) {
		return nil, ioError(FormatPcapng, off, err)
	}
	if len(h) < 8 {
		return nil, r.errf(off, ErrTruncated, "block header cut short (%d bytes)", len(h))
	}
	if binary.LittleEndian.Uint32(h) == ngSHB {
		if len(h) < 12 {
			return nil, r.errf(off, ErrTruncated, "section header cut short")
		}
		switch binary.LittleEndian.Uint32(h[8:]) {
		case 0x1a2b3c4d:
			r.bo, r.be = binary.LittleEndian, false
			r.ord = byteOrder{r.bo, 1}
		case 0x4d3c2b1a:
			r.bo, r.be = binary.BigEndian, true
			r.ord = byteOrder{r.bo, 2}
		default:
			return nil, r.errf(off, ErrFormat, "bad byte-order magic %x", h[8:12])
		}
	} else if r.bo == nil {
		return nil, r.errf(off, ErrFormat, "block before the first section header")
	}
	length := r.bo.Uint32(h[4:])
	if length < 12 || length%4 != 0 || length > ngMaxBlock {
		return nil, r.errf(off, ErrFormat, "bad block length %d", length)
	}
	var blk []byte
	if int(length) <= r.br.Size() {
		blk, err = r.br.Peek(int(length))
		if len(blk) < int(length) && isIOError(err) {
			return nil, ioError(FormatPcapng, off, err)
		}
		if len(blk) < int(length) {
			return nil, r.errf(off, ErrTruncated, "block of %d bytes cut short after %d", length, len(blk))
		}
		r.br.Discard(int(length))
	} else {
		if cap(r.big) < int(length) {
			r.big = make([]byte, length)
		}
		blk = r.big[:length]
		if n, err := io.ReadFull(r.br, blk); isIOError(err) {
			return nil, ioError(FormatPcapng, off, err)
		} else if n < int(length) {
			return nil, r.errf(off, ErrTruncated, "block of %d bytes cut short after %d", length, n)
		}
	}
	r.off += int64(length)
	if tail := r.bo.Uint32(blk[length-4:]); tail != length {
		return nil, r.errf(off, ErrFormat, "block length %d, trailing length %d", length, tail)
	}
	if r.typ(blk) == ngSHB {
		if length < 28 || r.bo.Uint16(blk[12:]) != 1 {
			return nil, r.errf(off, ErrFormat, "unsupported section header (length %d, version %d)", length, r.bo.Uint16(blk[12:]))
		}
		for _, d := range r.drops {
			r.dropsB += d
		}
		r.lts, r.snaps, r.drops = r.lts[:0], r.snaps[:0], r.drops[:0]
	}
	return blk, nil
}

// fromWindow returns the next block if it is whole in win and is not a
// section header, else nil.
func (r *pcapngReader) fromWindow() []byte {
	h := r.win[r.used:]
	if len(h) < 12 {
		return nil
	}
	if binary.LittleEndian.Uint32(h) == ngSHB {
		return nil
	}
	length := r.u32(h[4:])
	if length < 12 || length%4 != 0 || int(length) > len(h) || r.u32(h[length-4:]) != length {
		return nil
	}
	r.used += int(length)
	r.off += int64(length)
	return h[:length:length]
}

func (r *pcapngReader) Read() (*Event, error) {
	var ev Event
	if err := r.ReadInto(&ev); err != nil {
		return nil, err
	}
	return ev.Clone(), nil
}

// ReadInto reads the next block into ev. It decodes here, as readInto
// would (TestPcapngWindowMatchesChecked) but with fewer steps, what almost
// every block is: an enhanced packet block of a little-endian section,
// whole in the window, for an interface with a usbmon link type, its
// packet holding the whole usbmon header and no ISO descriptors; it
// leaves anything else, untouched, to readInto, which reports what is
// wrong. The fast path is not a function of its own: its call, for every
// event, cost a tenth of its steps.
func (r *pcapngReader) ReadInto(ev *Event) error {
	le := binary.LittleEndian
	h := r.win[r.used:]
	if len(h) < ngFast || r.be {
		return r.readInto(ev)
	}
	// The block's fields and the usbmon header read from a fixed-size
	// array: no bounds checks. A block of a 48-byte header may be
	// shorter than the array, which then reaches into the next block:
	// only the fields of a 64-byte header are read there, from a block
	// that holds them (caplen >= hl).
	b := (*[ngFast]byte)(h)
	length := le.Uint32(b[4:8])
	if le.Uint32(b[0:4]) != ngEPB || length < 32 || length%4 != 0 || uint64(length) > uint64(len(h)) ||
		le.Uint32(h[length-4:]) != length {
		return r.readInto(ev)
	}
	ifid, caplen := le.Uint32(b[8:12]), le.Uint32(b[20:24])
	if caplen > length-32 || uint64(ifid) >= uint64(len(r.lts)) {
		return r.readInto(ev)
	}
	lt := r.lts[ifid]
	hl := uint32(headerLenOf(int(lt)))
	if hl == 0 || caplen < hl || hl == HeaderLen64 && le.Uint32(b[28+60:28+64]) != 0 {
		return r.readInto(ev) // not usbmon, cut short, or ISO descriptors
	}
	r.used += int(length)
	r.off += int64(length)
	r.n++
	r.lt = int(lt)
	ev.ISO, ev.Data = r.iso[:0], h[28+hl:28+caplen]
	ev.Format = FormatPcapng
	ev.Synthesized = false
	if o := 28 + (caplen+3)&^3; o+4 <= length-4 {
		ev.Synthesized = r.synthesized(h[o : length-4])
	}
	// decodeHeaderLE's steps, written out here: its call, for every
	// event, cost a tenth of them.
	x := (*[HeaderLen64]byte)(b[28:])
	ev.ID = le.Uint64(x[0:8])
	ev.Type = EventType(x[8])
	ev.Transfer = TransferType(x[9])
	ev.In = x[10]&0x80 != 0
	ev.Endpoint = x[10] & 0x7f
	ev.Device = x[11]
	ev.Bus = le.Uint16(x[12:14])
	ev.SetupFlag = x[14]
	ev.DataFlag = x[15]
	ev.Sec = int64(le.Uint64(x[16:24]))
	ev.Usec = int32(le.Uint32(x[24:28]))
	ev.Status = int32(le.Uint32(x[28:32]))
	ev.Length = le.Uint32(x[32:36])
	ev.CapLen = le.Uint32(x[36:40])
	if ev.Transfer == Isochronous {
		ev.ErrorCount = int32(le.Uint32(x[40:44]))
		ev.NumDesc = int32(le.Uint32(x[44:48]))
		ev.Setup = [8]byte{}
	} else {
		ev.Setup = [8]byte(x[40:48])
		ev.ErrorCount, ev.NumDesc = 0, 0
	}
	ev.TextStamp = 0
	if hl == HeaderLen64 {
		ev.Interval = int32(le.Uint32(x[48:52]))
		ev.StartFrame = int32(le.Uint32(x[52:56]))
		ev.XferFlags = le.Uint32(x[56:60])
		ev.NDesc = 0
		ev.Fields = HasWallClock | HasBus | HasLengths | HasExtended
		return nil
	}
	ev.Interval, ev.StartFrame, ev.XferFlags, ev.NDesc = 0, 0, 0, 0
	ev.Fields = HasWallClock | HasBus | HasLengths
	return nil
}

// readInto is ReadInto for every block, checked.
func (r *pcapngReader) readInto(ev *Event) error {
	for {
		off := r.off
		blk, err := r.block()
		if err != nil {
			return err
		}
		body := blk[8 : len(blk)-4]
		var ifid uint32
		var data, opts []byte
		switch r.typ(blk) {
		case ngIDB:
			if len(body) < 8 {
				return r.errf(off, ErrFormat, "interface block too short")
			}
			r.lts = append(r.lts, r.u16(body))
			r.snaps = append(r.snaps, r.u32(body[4:]))
			r.drops = append(r.drops, 0)
			continue
		case ngISB:
			if len(body) < 12 {
				return r.errf(off, ErrFormat, "statistics block too short")
			}
			id := r.u32(body)
			if int(id) >= len(r.drops) {
				return r.errf(off, ErrFormat, "statistics for interface %d of %d", id, len(r.drops))
			}
			opt := body[12:]
			for len(opt) >= 4 {
				code, l := r.u16(opt), int(r.u16(opt[2:]))
				if code == 0 || 4+l > len(opt) {
					break
				}
				if code == 5 && l == 8 { // isb_ifdrop
					r.drops[id] = r.bo.Uint64(opt[4:])
				}
				opt = opt[4+(l+3)&^3:]
			}
			continue
		case ngEPB:
			if len(body) < 20 {
				return r.errf(off, ErrFormat, "packet block too short")
			}
			ifid = r.u32(body)
			caplen := r.u32(body[12:])
			if int64(caplen) > int64(len(body)-20) {
				return r.errf(off, ErrFormat, "captured length %d exceeds its block", caplen)
			}
			data = body[20 : 20+caplen]
			if o := 20 + (int(caplen)+3)&^3; o <= len(body) {
				opts = body[o:]
			}
		case ngPB:
			if len(body) < 20 {
				return r.errf(off, ErrFormat, "packet block too short")
			}
			ifid = uint32(r.u16(body))
			caplen := r.u32(body[12:])
			if int64(caplen) > int64(len(body)-20) {
				return r.errf(off, ErrFormat, "captured length %d exceeds its block", caplen)
			}
			data = body[20 : 20+caplen]
		case ngSPB:
			if len(body) < 4 || len(r.lts) == 0 {
				return r.errf(off, ErrFormat, "simple packet block without an interface")
			}
			n := r.u32(body)
			if s := r.snaps[0]; s != 0 && n > s {
				n = s
			}
			if int64(n) > int64(len(body)-4) {
				return r.errf(off, ErrFormat, "packet length %d exceeds its block", n)
			}
			data = body[4 : 4+n]
		default:
			continue // name resolution, custom blocks...: nothing for us
		}
		if int(ifid) >= len(r.lts) {
			return r.errf(off, ErrFormat, "packet %d: interface %d not described (%d interfaces)", r.n+1, ifid, len(r.lts))
		}
		lt := r.lts[ifid]
		hl := headerLenOf(int(lt))
		if hl == 0 {
			return r.errf(off, ErrFormat, "packet %d: link type %d is not usbmon (want 189 or 220)", r.n+1, lt)
		}
		r.n++
		r.lt = int(lt)
		if r.ord.kind == 1 && len(data) >= hl {
			// Little endian, the header whole (decodePacket's checks
			// hold): no ISO descriptors to read unless a 64-byte header
			// announces some.
			decodeHeaderLE((*[HeaderLen48]byte)(data), hl == HeaderLen64, data, ev)
			if hl == HeaderLen48 || ev.NDesc == 0 {
				ev.ISO, ev.Data = r.iso[:0], data[hl:]
				ev.Format = FormatPcapng
				ev.Synthesized = len(opts) >= 4 && r.synthesized(opts)
				return nil
			}
		}
		if err := decodeRecordOrder(data, hl, r.ord, ev, &r.iso); err != nil {
			return r.errf(off, unwrapSentinel(err), "packet %d: %v", r.n, err)
		}
		ev.Format = FormatPcapng
		ev.Synthesized = r.synthesized(opts)
		return nil
	}
}

// synthesized reports whether EPB options hold the SynthesizedComment.
func (r *pcapngReader) synthesized(opt []byte) bool {
	for len(opt) >= 4 {
		code, l := r.u16(opt), int(r.u16(opt[2:]))
		if code == 0 || 4+l > len(opt) {
			return false
		}
		if code == 1 && strings.HasPrefix(string(opt[4:4+l]), SynthesizedComment) {
			return true
		}
		opt = opt[4+(l+3)&^3:]
	}
	return false
}
