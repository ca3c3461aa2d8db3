package usbmon

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxTextData caps the data bytes accepted on one text line (the kernel
// prints at most 32; a line can hold no more than it has characters anyway).
const maxTextData = 128

// textBufSize is the text reader's buffer: the longest line it takes.
const textBufSize = 1 << 16

// textReader reads kernel text lines ('1u' or '1t'). It buffers its input
// itself (as bufio.Reader.ReadSlice would) so that the fast parser can
// work in the buffer: buf[r:w] is unread, buf[w] is a 0 byte (a sentinel
// no line has) and the fast parser's window fits after any position up
// to it.
type textReader struct {
	rd      io.Reader
	buf     []byte
	r, w    int
	err     error // from rd, returned once buf[r:w] is used up
	f       Format
	line    int
	off     int64
	keep    bool
	onSkip  func(error)
	skipped int
	data    []byte
	iso     []ISODesc
}

// NewTextReader returns a reader of '1u' (f = Format1u) or '1t' text.
func NewTextReader(r io.Reader, f Format, opt ReaderOptions) Reader {
	return newTextReader(r, nil, f, opt)
}

// newTextReader reads head, then r.
func newTextReader(r io.Reader, head []byte, f Format, opt ReaderOptions) *textReader {
	t := &textReader{rd: r, buf: make([]byte, textBufSize+len(fastWindow{})), f: f, keep: opt.KeepGoing, onSkip: opt.OnSkip,
		data: make([]byte, 0, maxTextData), iso: make([]ISODesc, 0, 5)}
	t.w = copy(t.buf[:textBufSize], head)
	t.buf[t.w] = 0
	return t
}

// fill moves the unread bytes to the front and reads more, like
// bufio.Reader's fill: one read that returns data or an error, giving up
// after 100 empty ones.
func (r *textReader) fill() {
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	for i := 0; ; i++ {
		if i == 100 {
			r.err = io.ErrNoProgress
			break
		}
		n, err := r.rd.Read(r.buf[r.w:textBufSize])
		if n < 0 || n > textBufSize-r.w {
			n, err = 0, errors.New("usbmon: reader returned an impossible count")
		}
		r.w += n
		if err != nil {
			r.err = err
			break
		}
		if n > 0 {
			break
		}
	}
	r.buf[r.w] = 0
}

// readSlice is bufio.Reader.ReadSlice('\n') over the reader's buffer.
func (r *textReader) readSlice() ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.buf[r.r:r.w], '\n'); i >= 0 {
			line := r.buf[r.r : r.r+i+1]
			r.r += i + 1
			return line, nil
		}
		if r.err != nil {
			line, err := r.buf[r.r:r.w], r.err
			r.r, r.err = r.w, nil
			return line, err
		}
		if r.w-r.r >= textBufSize {
			line := r.buf[r.r:r.w]
			r.r = r.w
			return line, bufio.ErrBufferFull
		}
		r.fill()
	}
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
		// The fast path: a line in the kernel's own form, in the buffer.
		if n := parseTextFast(r.buf, r.r, r.f, ev, r.data, r.iso); n > 0 {
			r.line++
			r.off += int64(n)
			r.r += n // ev.Data is in r.data's array: nothing to keep
			return nil
		}
		line, err := r.readSlice()
		if err == bufio.ErrBufferFull {
			r.line++
			ferr := &FormatError{Format: r.f, Line: r.line, Offset: r.off, Msg: "line longer than 64 KiB", Err: ErrFormat}
			for err == bufio.ErrBufferFull { // skip the rest of the line
				r.off += int64(len(line))
				line, err = r.readSlice()
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
