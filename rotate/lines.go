package rotate

import (
	"bytes"
	"io"
)

// LineOptions configure [Lines].
type LineOptions struct {
	// Header, if set, tells the lines that describe the whole log (say
	// mmiotrace's VERSION and PCIDEV lines) from its records: header lines
	// are written again at the start of every later file, so that each
	// file reads on its own. Only the lines before the first record are
	// headers.
	Header func(line []byte) bool
	// OnLine, if set, is called with every complete line (without its
	// newline) before it is written, header lines included.
	OnLine func(line []byte)
}

// Lines is an io.WriteCloser for a line-oriented log that is written in
// arbitrary pieces (a pipe's reads): it passes whole lines on and, on a
// ring of [Files], starts a new file only between two lines, so that no
// line is split between files and none is lost or written twice.
type Lines struct {
	opt     LineOptions
	files   *Files // nil: one output, w
	w       io.Writer
	partial []byte // the end of the last write, not yet a line
	header  []byte // the header lines seen, each with its newline
	records bool   // a record was seen: no more header lines
	err     error
}

// NewLines writes whole lines to w, one output.
func NewLines(w io.Writer, opt LineOptions) *Lines { return &Lines{opt: opt, w: w} }

// NewRotatingLines writes whole lines to the ring files, starting its
// first file at once.
func NewRotatingLines(files *Files, opt LineOptions) (*Lines, error) {
	l := &Lines{opt: opt, files: files}
	w, err := files.Next()
	if err != nil {
		return nil, err
	}
	l.w = w
	return l, nil
}

// Write writes the complete lines of p and keeps the rest for the next
// Write (or Close).
func (l *Lines) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n := len(p)
	if len(l.partial) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial, p...)
			return n, nil
		}
		l.partial = append(l.partial, p[:i+1]...)
		p = p[i+1:]
		line := l.partial
		l.partial = l.partial[:0]
		if err := l.lines(line); err != nil {
			return 0, err
		}
	}
	end := bytes.LastIndexByte(p, '\n') + 1
	if end > 0 {
		if err := l.lines(p[:end]); err != nil {
			return 0, err
		}
	}
	l.partial = append(l.partial, p[end:]...)
	return n, nil
}

// lines writes b, complete lines, rotating between them when due. Runs of
// lines that fit the current file go out in one write.
func (l *Lines) lines(b []byte) error {
	if l.opt.OnLine == nil && l.opt.Header == nil && l.files == nil {
		_, err := l.w.Write(b)
		l.err = err
		return err
	}
	start, pending := 0, int64(0)
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n') + i + 1
		line := b[i : j-1]
		if l.opt.OnLine != nil {
			l.opt.OnLine(line)
		}
		isHeader := false
		if !l.records && l.opt.Header != nil {
			if isHeader = l.opt.Header(line); isHeader {
				l.header = append(l.header, b[i:j]...)
			} else {
				l.records = true
			}
		}
		if l.files != nil && !isHeader && l.files.Due(pending) {
			if err := l.flush(b[start:i]); err != nil {
				return err
			}
			if err := l.rotate(); err != nil {
				return err
			}
			start, pending = i, 0
		}
		pending += int64(j - i)
		i = j
	}
	return l.flush(b[start:])
}

func (l *Lines) flush(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := l.w.Write(b)
	if err != nil {
		l.err = err
	}
	return err
}

func (l *Lines) rotate() error {
	w, err := l.files.Next()
	if err != nil {
		l.err = err
		return err
	}
	l.w = w
	return l.flush(l.header)
}

// Close writes a last line without its newline, if any, and closes the
// current file of a ring (the single output of NewLines is left open).
func (l *Lines) Close() error {
	if len(l.partial) > 0 && l.err == nil {
		last := l.partial
		l.partial = nil
		if l.opt.OnLine != nil {
			l.opt.OnLine(last)
		}
		if l.files != nil && l.files.Due(0) {
			if err := l.rotate(); err != nil {
				return err
			}
		}
		l.flush(last)
	}
	if l.files != nil {
		if err := l.files.Close(); err != nil && l.err == nil {
			l.err = err
		}
	}
	return l.err
}

// Files returns the ring, or nil for one output.
func (l *Lines) Files() *Files { return l.files }
