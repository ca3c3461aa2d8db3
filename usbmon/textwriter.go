package usbmon

import (
	"bufio"
	"io"
	"math/bits"
	"strconv"
)

// Writer writes usbmon events in one format.
type Writer interface {
	// Write writes one event. It does not keep ev.
	Write(ev *Event) error
	// Flush writes buffered output through.
	Flush() error
	// Loss reports what the format could not hold so far.
	Loss() Loss
}

// NewWriter returns a writer of format f (1u, 1t, pcap or pcapng). pcap and
// pcapng are written with link type 220 (64-byte headers).
func NewWriter(w io.Writer, f Format) (Writer, error) {
	return NewWriterLinkType(w, f, LinkTypeUSBLinuxMmapped)
}

// NewWriterLinkType is NewWriter with pcap and pcapng written with link
// type lt: LinkTypeUSBLinuxMmapped (220) or LinkTypeUSBLinux (189, 48-byte
// headers: no interval, start frame, transfer flags or ISO descriptors,
// counted in Loss). lt does not apply to text.
func NewWriterLinkType(w io.Writer, f Format, lt int) (Writer, error) {
	switch f {
	case Format1u, Format1t:
		return NewTextWriter(w, f), nil
	case FormatPcap:
		return NewPcapWriter(w, lt)
	case FormatPcapng:
		return NewPcapngWriter(w, lt)
	}
	return nil, &FormatError{Format: f, Offset: -1, Msg: "cannot write this format", Err: ErrFormat}
}

// TextWriter writes the kernel's text format ('1u' or '1t'). Events read
// from kernel text come out byte for byte as the kernel printed them.
type TextWriter struct {
	w    *bufio.Writer
	f    Format
	buf  []byte
	loss Loss
}

// NewTextWriter returns a writer of f (Format1u or Format1t).
func NewTextWriter(w io.Writer, f Format) *TextWriter {
	if f != Format1t {
		f = Format1u
	}
	return &TextWriter{w: bufio.NewWriterSize(w, 1<<16), f: f, buf: make([]byte, 0, 512)}
}

// Loss reports what text could not hold.
func (t *TextWriter) Loss() Loss { return t.loss }

// Flush flushes the buffer.
func (t *TextWriter) Flush() error { return t.w.Flush() }

// Write writes one line.
func (t *TextWriter) Write(ev *Event) error {
	t.buf = AppendText(t.buf[:0], ev, t.f, &t.loss)
	_, err := t.w.Write(t.buf)
	return err
}

const hexDigits = "0123456789abcdef"

func appendHex(b []byte, v uint64, width int) []byte {
	n := (bits.Len64(v) + 3) / 4
	if n < width {
		n = width
	}
	if n == 0 {
		n = 1
	}
	l := len(b)
	b = append(b, "0000000000000000"[:n]...)
	for i := l + n - 1; i >= l; i-- {
		b[i] = hexDigits[v&15]
		v >>= 4
	}
	return b
}

func appendDec0(b []byte, v uint64, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for v != 0 || len(tmp)-i < width || i == len(tmp) {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if i == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// TextStampOf returns the text API timestamp of ev: TextStamp if the source
// had it, otherwise one derived from the wall clock the way the kernel
// derives its own (seconds modulo 4096, in microseconds).
func TextStampOf(ev *Event) uint32 {
	if ev.Fields&HasTextStamp != 0 || ev.Fields&HasWallClock == 0 {
		return ev.TextStamp
	}
	return uint32(ev.Sec&0xFFF)*1000000 + uint32(ev.Usec)
}

// AppendText appends ev as one text line of format f (with newline) to b,
// counting into loss (if not nil) what the line cannot hold.
func AppendText(b []byte, ev *Event, f Format, loss *Loss) []byte {
	var dummy Loss
	if loss == nil {
		loss = &dummy
	}
	b = appendHex(b, ev.ID, 1)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(TextStampOf(ev)), 10)
	if ev.Fields&HasWallClock != 0 {
		loss.Add(LossWallClock)
	}
	if ev.XferFlags != 0 {
		loss.Add(LossXferFlags)
	}
	b = append(b, ' ', byte(ev.Type), ' ', ev.Transfer.Letter())
	if ev.In {
		b = append(b, 'i')
	} else {
		b = append(b, 'o')
	}
	b = append(b, ':')
	if f == Format1u {
		b = strconv.AppendUint(b, uint64(ev.Bus), 10)
		b = append(b, ':')
		b = appendDec0(b, uint64(ev.Device), 3)
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(ev.Endpoint), 10)
	} else {
		if ev.Fields&HasBus != 0 && ev.Bus != 0 {
			loss.Add(LossBus)
		}
		b = appendDec0(b, uint64(ev.Device), 3)
		b = append(b, ':')
		b = appendDec0(b, uint64(ev.Endpoint), 2)
	}
	length := int32(ev.Length)
	switch {
	case f == Format1u && ev.Type != SubmitError && ev.Transfer == Isochronous:
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(ev.Status), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(ev.Interval), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(ev.StartFrame), 10)
		if ev.Type != Submission {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(ev.ErrorCount), 10)
		}
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(ev.NumDesc), 10)
		nd := int(ev.NumDesc)
		if nd > 5 {
			nd = 5
		}
		if nd > len(ev.ISO) {
			nd = len(ev.ISO)
		}
		if len(ev.ISO) > nd {
			loss.Add(LossISO)
		}
		for _, d := range ev.ISO[:max(nd, 0)] {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(d.Status), 10)
			b = append(b, ':')
			b = strconv.AppendUint(b, uint64(d.Offset), 10)
			b = append(b, ':')
			b = strconv.AppendUint(b, uint64(d.Length), 10)
		}
	case f == Format1u && ev.Type != SubmitError && ev.Transfer == Interrupt:
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(ev.Status), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(ev.Interval), 10)
	default:
		if f == Format1t && (ev.Transfer == Isochronous || ev.Transfer == Interrupt) &&
			(ev.Interval != 0 || ev.StartFrame != 0 || len(ev.ISO) != 0) {
			loss.Add(LossExtended)
		}
		switch ev.SetupFlag {
		case SetupPresent:
			s := &ev.Setup
			b = append(b, " s "...)
			b = appendHex(b, uint64(s[0]), 2)
			b = append(b, ' ')
			b = appendHex(b, uint64(s[1]), 2)
			for i := 2; i < 8; i += 2 {
				b = append(b, ' ')
				b = appendHex(b, uint64(s[i])|uint64(s[i+1])<<8, 4)
			}
		case SetupNone:
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(ev.Status), 10)
		default:
			b = append(b, ' ', ev.SetupFlag)
			b = append(b, " __ __ ____ ____ ____"...)
		}
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(length), 10)
	if length > 0 {
		if ev.DataFlag == DataPresent {
			b = append(b, " ="...)
			data := ev.Data
			if len(data) > 32 {
				data = data[:32]
				loss.Add(LossData)
			}
			for len(data) >= 4 {
				b = append(b, ' ',
					hexDigits[data[0]>>4], hexDigits[data[0]&15], hexDigits[data[1]>>4], hexDigits[data[1]&15],
					hexDigits[data[2]>>4], hexDigits[data[2]&15], hexDigits[data[3]>>4], hexDigits[data[3]&15])
				data = data[4:]
			}
			if len(data) > 0 {
				b = append(b, ' ')
				for _, c := range data {
					b = append(b, hexDigits[c>>4], hexDigits[c&15])
				}
			}
		} else {
			b = append(b, ' ', ev.DataFlag)
		}
	}
	return append(b, '\n')
}
