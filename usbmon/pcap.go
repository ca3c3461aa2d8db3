package usbmon

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
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

func headerLenOf(lt layers.LinkType) int {
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
	hl := headerLenOf(layers.LinkType(lt))
	if hl == 0 {
		return nil, &FormatError{Format: FormatPcap, Offset: 20,
			Msg: fmt.Sprintf("link type %d is not usbmon (want 189 or 220)", lt), Err: ErrFormat}
	}
	return &pcapReader{br: br, bo: bo, hdrLen: hl, lt: int(lt), snap: bo.Uint32(h[16:]), off: 24,
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
	if err := decodeRecord(data, r.hdrLen, r.bo, ev, &r.iso); err != nil {
		return &FormatError{Format: FormatPcap, Offset: off, Msg: fmt.Sprintf("record %d: %v", r.n, err), Err: unwrapSentinel(err)}
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
	if err := DecodePacket(data, hdrLen, bo, ev, *iso); err != nil {
		return err
	}
	if cap(ev.ISO) > cap(*iso) {
		*iso = ev.ISO[:0]
	}
	return nil
}

func unwrapSentinel(err error) error {
	if errors.Is(err, ErrTruncated) {
		return ErrTruncated
	}
	return ErrFormat
}

func layersLinkType(lt uint16) layers.LinkType { return layers.LinkType(lt) }

// PcapWriter writes a classic pcap file (little endian, microseconds).
type PcapWriter struct {
	bw     *bufio.Writer
	w      *pcapgo.Writer
	hdrLen int
	buf    []byte
	loss   Loss
}

// NewPcapWriter writes the file header for link type lt (189 or 220).
func NewPcapWriter(w io.Writer, lt int) (*PcapWriter, error) {
	hl := headerLenOf(layers.LinkType(lt))
	if hl == 0 {
		return nil, fmt.Errorf("usbmon: link type %d is not usbmon (want 189 or 220)", lt)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	pw := pcapgo.NewWriter(bw)
	if err := pw.WriteFileHeader(snapLen, layers.LinkType(lt)); err != nil {
		return nil, err
	}
	return &PcapWriter{bw: bw, w: pw, hdrLen: hl}, nil
}

// Write writes one record.
func (p *PcapWriter) Write(ev *Event) error {
	ci, data := recordOf(ev, p.hdrLen, &p.buf, &p.loss)
	return p.w.WritePacket(ci, data)
}

// WriteRecord is PcapngWriter.WriteRecord for pcap.
func (p *PcapWriter) WriteRecord(ev *Event, rec []byte) error {
	return p.w.WritePacket(recordInfo(ev, p.hdrLen, len(rec)), rec)
}

// Flush flushes buffered records.
func (p *PcapWriter) Flush() error { return p.bw.Flush() }

// Loss reports what the link type could not hold.
func (p *PcapWriter) Loss() Loss { return p.loss }

func recordOf(ev *Event, hdrLen int, buf *[]byte, loss *Loss) (gopacket.CaptureInfo, []byte) {
	b := AppendPacket((*buf)[:0], ev, hdrLen, binary.LittleEndian, loss)
	if len(b) > snapLen {
		b = b[:snapLen]
		loss.add(LossData)
	}
	*buf = b
	return recordInfo(ev, hdrLen, len(b)), b
}

// recordInfo is the pcap record header of ev: its timestamp, the captured
// length n and the original length (header, descriptors, URB length).
func recordInfo(ev *Event, hdrLen, n int) gopacket.CaptureInfo {
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
	return gopacket.CaptureInfo{Timestamp: time.Unix(sec, usec*1000), CaptureLength: n, Length: orig}
}

// PcapngWriter writes a pcapng file with one usbmon interface.
type PcapngWriter struct {
	bw     *bufio.Writer
	w      *pcapgo.NgWriter
	hdrLen int
	buf    []byte
	loss   Loss
	n      uint64
}

// NewPcapngWriter writes the section header and one interface of link
// type lt (189 or 220), named "usbmon0" as Wireshark names it.
func NewPcapngWriter(w io.Writer, lt int) (*PcapngWriter, error) {
	return NewPcapngWriterInterface(w, lt, "usbmon0")
}

// NewPcapngWriterInterface is NewPcapngWriter with the interface name.
func NewPcapngWriterInterface(w io.Writer, lt int, name string) (*PcapngWriter, error) {
	hl := headerLenOf(layers.LinkType(lt))
	if hl == 0 {
		return nil, fmt.Errorf("usbmon: link type %d is not usbmon (want 189 or 220)", lt)
	}
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = layers.LinkType(lt)
	intf.Name = name
	intf.SnapLength = snapLen
	opt := pcapgo.DefaultNgWriterOptions
	opt.SectionInfo.Application = "iotap"
	bw := bufio.NewWriterSize(w, 1<<20)
	nw, err := pcapgo.NewNgWriterInterface(bw, intf, opt)
	if err != nil {
		return nil, err
	}
	return &PcapngWriter{bw: bw, w: nw, hdrLen: hl}, nil
}

// Write writes one enhanced packet block.
func (p *PcapngWriter) Write(ev *Event) error {
	ci, data := recordOf(ev, p.hdrLen, &p.buf, &p.loss)
	p.n++
	if ev.Synthesized {
		return p.w.WritePacketWithOptions(ci, data, pcapgo.NgPacketOptions{Comments: []string{SynthesizedComment}})
	}
	return p.w.WritePacket(ci, data)
}

// WriteStats writes an interface statistics block: packets received (the
// events written so far) and dropped (by the kernel) at time t.
func (p *PcapngWriter) WriteStats(t time.Time, dropped uint64) error {
	return p.w.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{
		LastUpdate: t, PacketsReceived: p.n, PacketsDropped: dropped,
		StartTime: time.Time{}, EndTime: time.Time{},
	})
}

// WriteRecord writes ev using rec, the event's binary record as the
// kernel delivered it (see Capture.Record), instead of encoding ev again:
// it saves a copy of the data. rec must be little endian with a header of
// the writer's link type.
func (p *PcapngWriter) WriteRecord(ev *Event, rec []byte) error {
	ci := recordInfo(ev, p.hdrLen, len(rec))
	p.n++
	return p.w.WritePacket(ci, rec)
}

// Flush flushes buffered blocks.
func (p *PcapngWriter) Flush() error {
	if err := p.w.Flush(); err != nil {
		return err
	}
	return p.bw.Flush()
}

// Loss reports what the link type could not hold.
func (p *PcapngWriter) Loss() Loss { return p.loss }
