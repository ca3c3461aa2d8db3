package usbmon

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// snapLen of the pcap files we write: above the kernel's largest record
// (a fifth of the 1.2 MB maximum ring plus header and 128 ISO descriptors).
const snapLen = 262144

func isPcapMagic(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	switch binary.BigEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		return true
	}
	return false
}

func headerLenOf(lt int) int {
	switch lt {
	case LinkTypeUSBLinux:
		return HeaderLen48
	case LinkTypeUSBLinuxMmapped:
		return HeaderLen64
	}
	return 0
}

// pcapReader reads classic pcap files of link type 189 or 220. It parses
// the (simple) file format itself rather than with pcapgo.Reader, because
// that one reports a record cut short as a clean EOF and gives no offsets.
type pcapReader struct {
	br     *bufio.Reader
	bo     binary.ByteOrder
	ord    byteOrder // bo for decodeRecordOrder
	hdrLen int
	lt     int
	snap   uint32
	off    int64 // offset of the next record
	n      int   // records read
	buf    []byte
	hdr    [16]byte
	iso    []ISODesc
}

// maxRecord caps the allocation a record header can ask for.
const maxRecord = 16 << 20

func newPcapReader(br *bufio.Reader) (Reader, error) {
	var h [24]byte
	if n, err := io.ReadFull(br, h[:]); isIOError(err) {
		return nil, ioError(FormatPcap, int64(n), err)
	} else if err != nil {
		return nil, &FormatError{Format: FormatPcap, Offset: int64(n), Msg: "file header cut short", Err: ErrTruncated}
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if m := binary.BigEndian.Uint32(h[:]); m == 0xa1b2c3d4 || m == 0xa1b23c4d {
		bo = binary.BigEndian
	}
	lt := bo.Uint32(h[20:]) & 0xffff
	hl := headerLenOf(int(lt))
	if hl == 0 {
		return nil, &FormatError{Format: FormatPcap, Offset: 20,
			Msg: fmt.Sprintf("link type %d is not usbmon (want 189 or 220)", lt), Err: ErrFormat}
	}
	return &pcapReader{br: br, bo: bo, ord: orderOf(bo), hdrLen: hl, lt: int(lt), snap: bo.Uint32(h[16:]), off: 24,
		buf: make([]byte, 0, 4096), iso: make([]ISODesc, 0, 8)}, nil
}

func (r *pcapReader) ReadInto(ev *Event) error {
	off := r.off
	h := r.hdr[:]
	n, err := io.ReadFull(r.br, h)
	if err == io.EOF {
		return io.EOF
	}
	if isIOError(err) {
		return ioError(FormatPcap, off, err)
	}
	if err != nil {
		return &FormatError{Format: FormatPcap, Offset: off, Msg: fmt.Sprintf("record %d: header cut short after %d bytes", r.n+1, n), Err: ErrTruncated}
	}
	caplen, origlen := r.bo.Uint32(h[8:]), r.bo.Uint32(h[12:])
	if caplen > maxRecord {
		return &FormatError{Format: FormatPcap, Offset: off, Msg: fmt.Sprintf("record %d: capture length %d is implausible", r.n+1, caplen), Err: ErrFormat}
	}
	_ = origlen
	if cap(r.buf) < int(caplen) {
		r.buf = make([]byte, caplen)
	}
	data := r.buf[:caplen]
	if n, err := io.ReadFull(r.br, data); isIOError(err) {
		return ioError(FormatPcap, off, err)
	} else if err != nil {
		return &FormatError{Format: FormatPcap, Offset: off, Msg: fmt.Sprintf("record %d: %d of %d data bytes", r.n+1, n, caplen), Err: ErrTruncated}
	}
	r.n++
	r.off += 16 + int64(caplen)
	if err := decodeRecordOrder(data, r.hdrLen, r.ord, ev, &r.iso); err != nil {
		return &FormatError{Format: FormatPcap, Offset: off, Msg: fmt.Sprintf("record %d: %s", r.n, recordDetail(err)), Err: unwrapSentinel(err)}
	}
	ev.Format = FormatPcap
	return nil
}

// isIOError reports whether err is a read error rather than the end of
// the input: such an error is returned as it is, never as ErrTruncated
// (data lost, exit 3) or ErrFormat.
func isIOError(err error) bool {
	return err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF)
}

// ioError wraps a read error with the position it happened at.
func ioError(f Format, off int64, err error) error {
	return fmt.Errorf("usbmon: %s: reading at byte %d: %w", f, off, err)
}

func (r *pcapReader) Format() Format { return FormatPcap }
func (r *pcapReader) LinkType() int  { return r.lt }

func (r *pcapReader) Read() (*Event, error) {
	var ev Event
	if err := r.ReadInto(&ev); err != nil {
		return nil, err
	}
	return ev.Clone(), nil
}

func decodeRecord(data []byte, hdrLen int, bo binary.ByteOrder, ev *Event, iso *[]ISODesc) error {
	return decodeRecordOrder(data, hdrLen, orderOf(bo), ev, iso)
}

// decodeRecordOrder is decodeRecord with the byte order already resolved
// (orderOf compares interfaces: readers resolve it once per file or
// section).
func decodeRecordOrder(data []byte, hdrLen int, bo byteOrder, ev *Event, iso *[]ISODesc) error {
	if err := decodePacket(data, hdrLen, bo, ev, *iso); err != nil {
		return err
	}
	if cap(ev.ISO) > cap(*iso) {
		*iso = ev.ISO[:0]
	}
	return nil
}

// recordDetail is what a record's decoding error err says, for the
// FormatError that names the record: without the "usbmon: " prefix the
// FormatError gives and the sentinel it wraps (its Err), "512 ISO
// descriptors (kernel limit 128)" where err.Error() is "usbmon: 512 ISO
// descriptors (kernel limit 128): usbmon: bad format".
func recordDetail(err error) string {
	s := strings.TrimPrefix(err.Error(), "usbmon: ")
	return strings.TrimSuffix(s, ": "+unwrapSentinel(err).Error())
}

func unwrapSentinel(err error) error {
	if errors.Is(err, ErrTruncated) {
		return ErrTruncated
	}
	return ErrFormat
}

// The pcap and pcapng writers below write the few blocks iotap needs
// themselves, in the bytes gopacket's pcapgo wrote before (the golden
// files did not change): linking gopacket cost every iotap process about
// 9 ms of CPU at start (package init of gopacket/layers fills 5 MB of
// tables), more than decoding 100,000 events (docs/performance.md).
// TestPcapWriterOracle checks what they write with tshark.

// PcapWriter writes a classic pcap file (little endian, microseconds).
type PcapWriter struct {
	bw     *bufio.Writer
	hdrLen int
	buf    []byte
	hdr    [16]byte
	loss   Loss
}

// NewPcapWriter writes the file header for link type lt (189 or 220).
func NewPcapWriter(w io.Writer, lt int) (*PcapWriter, error) {
	hl := headerLenOf(lt)
	if hl == 0 {
		return nil, fmt.Errorf("usbmon: link type %d is not usbmon (want 189 or 220)", lt)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], 0xa1b2c3d4) // microseconds
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	// thiszone and sigfigs: 0
	binary.LittleEndian.PutUint32(h[16:], snapLen)
	binary.LittleEndian.PutUint32(h[20:], uint32(lt))
	if _, err := bw.Write(h[:]); err != nil {
		return nil, err
	}
	return &PcapWriter{bw: bw, hdrLen: hl}, nil
}

// Write writes one record.
func (p *PcapWriter) Write(ev *Event) error {
	ri, data := recordOf(ev, p.hdrLen, &p.buf, &p.loss)
	return p.write(ri, data)
}

// WriteRecord is PcapngWriter.WriteRecord for pcap.
func (p *PcapWriter) WriteRecord(ev *Event, rec []byte) error {
	return p.write(recordInfo(ev, p.hdrLen, len(rec)), rec)
}

func (p *PcapWriter) write(ri recInfo, data []byte) error {
	if err := ri.check(len(data)); err != nil {
		return err
	}
	h := p.hdr[:]
	binary.LittleEndian.PutUint32(h[0:], uint32(ri.sec))
	binary.LittleEndian.PutUint32(h[4:], uint32(ri.usec))
	binary.LittleEndian.PutUint32(h[8:], uint32(ri.capLen))
	binary.LittleEndian.PutUint32(h[12:], uint32(ri.origLen))
	if _, err := p.bw.Write(h); err != nil {
		return err
	}
	_, err := p.bw.Write(data)
	return err
}

// Flush flushes buffered records.
func (p *PcapWriter) Flush() error { return p.bw.Flush() }

// Loss reports what the link type could not hold.
func (p *PcapWriter) Loss() Loss { return p.loss }

func recordOf(ev *Event, hdrLen int, buf *[]byte, loss *Loss) (recInfo, []byte) {
	b := AppendPacket((*buf)[:0], ev, hdrLen, binary.LittleEndian, loss)
	if len(b) > snapLen {
		b = b[:snapLen]
		loss.add(LossData)
	}
	*buf = b
	return recordInfo(ev, hdrLen, len(b)), b
}

// recInfo is the header of a record: its timestamp, captured and original
// lengths.
type recInfo struct {
	sec, usec       int64
	capLen, origLen int
}

func (ri recInfo) check(n int) error {
	if ri.capLen != n || ri.capLen > ri.origLen {
		return fmt.Errorf("usbmon: record of %d bytes with captured length %d and length %d", n, ri.capLen, ri.origLen)
	}
	return nil
}

// unixNano is the record's time in nanoseconds since the epoch.
func (ri recInfo) unixNano() int64 { return time.Unix(ri.sec, ri.usec*1000).UnixNano() }

// recordInfo is the pcap record header of ev: its timestamp, the captured
// length n and the original length (header, descriptors, URB length).
func recordInfo(ev *Event, hdrLen, n int) recInfo {
	orig := n
	if hdrLen == HeaderLen64 {
		if o := HeaderLen64 + len(ev.ISO)*ISODescLen + int(ev.Length); o > orig {
			orig = o
		}
	} else if o := HeaderLen48 + int(ev.Length); o > orig {
		orig = o
	}
	sec, usec := ev.Sec, int64(ev.Usec)
	if ev.Fields&HasWallClock == 0 {
		sec, usec = int64(ev.TextStamp/1000000), int64(ev.TextStamp%1000000)
	}
	// time.Unix normalises a microsecond field out of range, as pcapgo did.
	t := time.Unix(sec, usec*1000)
	return recInfo{sec: t.Unix(), usec: int64(t.Nanosecond() / 1000), capLen: n, origLen: orig}
}

// pcapng block types and option codes (draft-ietf-opsawg-pcapng).
const (
	ngOptEnd       = 0
	ngOptComment   = 1
	ngOptHardware  = 2 // shb_hardware
	ngOptOS        = 3 // shb_os
	ngOptUserAppl  = 4 // shb_userappl
	ngOptIfName    = 2 // if_name
	ngOptIfTSResol = 9
	ngOptIfOS      = 12
	ngOptISBRecv   = 4 // isb_ifrecv
	ngOptISBDrop   = 5 // isb_ifdrop
)

// PcapngWriter writes a pcapng file with one usbmon interface.
type PcapngWriter struct {
	bw     *bufio.Writer
	hdrLen int
	buf    []byte
	blk    []byte
	loss   Loss
	n      uint64
}

// appendNgOption appends option code with value v, padded to 4 bytes.
func appendNgOption(b []byte, code uint16, v []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for i := len(v); i%4 != 0; i++ {
		b = append(b, 0)
	}
	return b
}

// endNgBlock ends the block begun at b[start:] (type and a length
// placeholder written): the options end, the lengths are set.
func endNgBlock(b []byte, start int, withOptions bool) []byte {
	if withOptions {
		b = binary.LittleEndian.AppendUint32(b, ngOptEnd)
	}
	n := len(b) - start + 4
	binary.LittleEndian.PutUint32(b[start+4:], uint32(n))
	return binary.LittleEndian.AppendUint32(b, uint32(n))
}

// NewPcapngWriter writes the section header and one interface of link
// type lt (189 or 220), named "usbmon0" as Wireshark names it.
func NewPcapngWriter(w io.Writer, lt int) (*PcapngWriter, error) {
	return NewPcapngWriterInterface(w, lt, "usbmon0")
}

// NewPcapngWriterInterface is NewPcapngWriter with the interface name.
func NewPcapngWriterInterface(w io.Writer, lt int, name string) (*PcapngWriter, error) {
	hl := headerLenOf(lt)
	if hl == 0 {
		return nil, fmt.Errorf("usbmon: link type %d is not usbmon (want 189 or 220)", lt)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	// Section header: byte-order magic, version 1.0, length unknown; the
	// application, hardware and OS.
	b := binary.LittleEndian.AppendUint32(nil, ngSHB)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0x1a2b3c4d)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint64(b, ^uint64(0))
	b = appendNgOption(b, ngOptUserAppl, []byte("iotap"))
	b = appendNgOption(b, ngOptHardware, []byte(runtime.GOARCH))
	b = appendNgOption(b, ngOptOS, []byte(runtime.GOOS))
	b = endNgBlock(b, 0, true)
	// Interface: link type, snap length, name, OS, nanosecond stamps.
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, ngIDB)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(lt))
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint32(b, snapLen)
	if name != "" {
		b = appendNgOption(b, ngOptIfName, []byte(name))
	}
	b = appendNgOption(b, ngOptIfOS, []byte(runtime.GOOS))
	b = appendNgOption(b, ngOptIfTSResol, []byte{9})
	b = endNgBlock(b, start, true)
	if _, err := bw.Write(b); err != nil {
		return nil, err
	}
	return &PcapngWriter{bw: bw, hdrLen: hl, blk: b[:0]}, nil
}

// Write writes one enhanced packet block.
func (p *PcapngWriter) Write(ev *Event) error {
	ri, data := recordOf(ev, p.hdrLen, &p.buf, &p.loss)
	p.n++
	return p.writeEPB(ri, data, ev.Synthesized)
}

// writeEPB writes an enhanced packet block on interface 0, with the
// comment that marks a synthesized event.
func (p *PcapngWriter) writeEPB(ri recInfo, data []byte, synthesized bool) error {
	if err := ri.check(len(data)); err != nil {
		return err
	}
	ts := ri.unixNano()
	b := binary.LittleEndian.AppendUint32(p.blk[:0], ngEPB)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0) // interface
	b = binary.LittleEndian.AppendUint32(b, uint32(ts>>32))
	b = binary.LittleEndian.AppendUint32(b, uint32(ts))
	b = binary.LittleEndian.AppendUint32(b, uint32(ri.capLen))
	b = binary.LittleEndian.AppendUint32(b, uint32(ri.origLen))
	// The data goes straight to the buffered writer; only the lengths
	// around it are built here.
	pad := (4 - len(data)%4) % 4
	var opts []byte
	if synthesized {
		opts = appendNgOption(b[len(b):], ngOptComment, []byte(SynthesizedComment))
		opts = binary.LittleEndian.AppendUint32(opts, ngOptEnd)
	}
	n := len(b) + len(data) + pad + len(opts) + 4
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	p.blk = b
	if _, err := p.bw.Write(b); err != nil {
		return err
	}
	if _, err := p.bw.Write(data); err != nil {
		return err
	}
	var tail [8]byte
	if _, err := p.bw.Write(tail[:pad]); err != nil {
		return err
	}
	if _, err := p.bw.Write(opts); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(tail[:], uint32(n))
	_, err := p.bw.Write(tail[:4])
	return err
}

// WriteStats writes an interface statistics block: packets received (the
// events written so far) and dropped (by the kernel) at time t.
func (p *PcapngWriter) WriteStats(t time.Time, dropped uint64) error {
	ts := t.UnixNano()
	if t.IsZero() {
		ts = 0
	}
	b := binary.LittleEndian.AppendUint32(p.blk[:0], ngISB)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0) // interface
	b = binary.LittleEndian.AppendUint32(b, uint32(ts>>32))
	b = binary.LittleEndian.AppendUint32(b, uint32(ts))
	b = appendNgOption(b, ngOptISBDrop, binary.LittleEndian.AppendUint64(nil, dropped))
	b = appendNgOption(b, ngOptISBRecv, binary.LittleEndian.AppendUint64(nil, p.n))
	b = endNgBlock(b, 0, true)
	p.blk = b
	_, err := p.bw.Write(b)
	return err
}

// WriteRecord writes ev using rec, the event's binary record as the
// kernel delivered it (see Capture.Record), instead of encoding ev again:
// it saves a copy of the data. rec must be little endian with a header of
// the writer's link type.
func (p *PcapngWriter) WriteRecord(ev *Event, rec []byte) error {
	ri := recordInfo(ev, p.hdrLen, len(rec))
	p.n++
	return p.writeEPB(ri, rec, false)
}

// Flush flushes buffered blocks.
func (p *PcapngWriter) Flush() error { return p.bw.Flush() }

// Loss reports what the link type could not hold.
func (p *PcapngWriter) Loss() Loss { return p.loss }
