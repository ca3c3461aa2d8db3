package usbmon

import (
	"bufio"
	"errors"
	"io"
)

// maxTextData caps the data bytes accepted on one text line (the kernel
// prints at most 32; a line can hold no more than it has characters anyway).
const maxTextData = 128

// textReader reads kernel text lines ('1u' or '1t').
type textReader struct {
	br      *bufio.Reader
	f       Format
	line    int
	off     int64
	keep    bool
	onSkip  func(error)
	skipped int
	data    []byte
	iso     []ISODesc
	// pad holds a line for the fast parser when fewer than fastPad bytes
	// follow it in the bufio buffer.
	pad [fastMaxLine + fastPad]byte
}

// NewTextReader returns a reader of '1u' (f = Format1u) or '1t' text.
func NewTextReader(r io.Reader, f Format, opt ReaderOptions) Reader {
	return newTextReader(bufio.NewReaderSize(r, 1<<16), f, opt)
}

func newTextReader(br *bufio.Reader, f Format, opt ReaderOptions) *textReader {
	return &textReader{br: br, f: f, keep: opt.KeepGoing, onSkip: opt.OnSkip,
		data: make([]byte, 0, maxTextData), iso: make([]ISODesc, 0, 5)}
}

func (r *textReader) Format() Format { return r.f }

// Skipped returns the number of bad lines skipped (KeepGoing).
func (r *textReader) Skipped() int { return r.skipped }

func (r *textReader) Read() (*Event, error) {
	var ev Event
	if err := r.ReadInto(&ev); err != nil {
		return nil, err
	}
	return ev.Clone(), nil
}

func (r *textReader) ReadInto(ev *Event) error {
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.line++
			ferr := &FormatError{Format: r.f, Line: r.line, Offset: r.off, Msg: "line longer than 64 KiB", Err: ErrFormat}
			for err == bufio.ErrBufferFull { // skip the rest of the line
				r.off += int64(len(line))
				line, err = r.br.ReadSlice('\n')
			}
			r.off += int64(len(line))
			if !r.keep {
				return ferr
			}
			r.skip(ferr)
			continue
		}
		if len(line) == 0 && err != nil {
			return err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		r.line++
		start := r.off
		r.off += int64(len(line))
		body := trimEOL(line)
		if len(body) == 0 && err == nil {
			// Blank lines are not events; the kernel never writes them.
			ferr := &FormatError{Format: r.f, Line: r.line, Offset: start, Msg: "empty line", Err: ErrFormat}
			if !r.keep {
				return ferr
			}
			r.skip(ferr)
			continue
		}
		if len(body) == 0 {
			return io.EOF
		}
		if len(body) <= fastMaxLine {
			b := line[:cap(line)] // the bytes after the line, if enough: read, never used
			if len(b) < len(body)+fastPad {
				b = r.pad[:]
				copy(b, body)
			}
			if parseTextFast(b, len(body), r.f, ev, r.data, r.iso) {
				r.data = ev.Data[:0]
				return nil
			}
		}
		ev.reset()
		ev.Data = r.data[:0]
		ev.ISO = r.iso[:0]
		if msg := parseTextLine(body, r.f, ev); msg != "" {
			ferr := &FormatError{Format: r.f, Line: r.line, Offset: start, Msg: msg, Err: ErrFormat}
			if err != nil { // last line without newline: probably cut
				ferr.Err = ErrTruncated
			}
			if !r.keep {
				return ferr
			}
			r.skip(ferr)
			continue
		}
		r.data = ev.Data[:0]
		return nil
	}
}

func (r *textReader) skip(err error) {
	r.skipped++
	if r.onSkip != nil {
		r.onSkip(err)
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
