package mmiotrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/internal/mapfile"
)

// DefaultMaxLine is the longest line a Reader accepts by default.
const DefaultMaxLine = 1 << 20

// Reader reads records from an mmiotrace log, plain or compressed with
// gzip, xz or zstd (detected from the magic bytes). It does not allocate
// per record. A Reader is not safe for concurrent use.
type Reader struct {
	src       io.Reader
	in        io.Reader
	closeDec  func()
	comp      Compression
	started   bool
	buf       []byte
	r, w      int
	eof       bool
	err       error
	line      int64
	skipped   int64
	lost      uint64
	keepGoing bool
	maxLine   int
	truncated bool
	firstBad  error
	file      *os.File // opened by Open
	mapped    bool     // buf is a mapping of a file (Open)
	// dropAt is where the next dropBehind is due (0: never; see
	// DropBehind).
	dropAt, dropped int
}

// NewReader returns a Reader of r. Decompression is set up on the first
// read.
func NewReader(r io.Reader) *Reader {
	return &Reader{src: r, buf: make([]byte, 256<<10), maxLine: DefaultMaxLine}
}

// SetKeepGoing makes the reader skip lines that do not parse instead of
// returning an error; Skipped counts them and FirstSkipError describes the
// first.
func (r *Reader) SetKeepGoing(on bool) { r.keepGoing = on }

// SetMaxLine sets the longest accepted line in bytes.
func (r *Reader) SetMaxLine(n int) { r.maxLine = n }

// Line returns the number of the last line read (1-based).
func (r *Reader) Line() int64 { return r.line }

// Skipped returns how many bad lines were skipped (keep-going mode).
func (r *Reader) Skipped() int64 { return r.skipped }

// FirstSkipError returns the error of the first skipped line, or nil.
func (r *Reader) FirstSkipError() error { return r.firstBad }

// Lost returns the sum of N over the kernel's "Lost N events." markers
// read so far.
func (r *Reader) Lost() uint64 { return r.lost }

// Truncated reports whether the input ended in the middle of a line (the
// partial line is still returned as a record when it parses, and dropped
// when it does not: a cut record is not a bad line).
func (r *Reader) Truncated() bool { return r.truncated }

// Compression returns the compression detected on the input (valid after
// the first read).
func (r *Reader) Compression() Compression { return r.comp }

// Close releases decompressor resources, and the file for a Reader from
// Open. It does not close a source given to NewReader.
func (r *Reader) Close() error {
	if r.closeDec != nil {
		r.closeDec()
		r.closeDec = nil
	}
	if r.file != nil {
		err := r.file.Close()
		r.file = nil
		return err
	}
	return nil
}

func (r *Reader) start() error {
	r.started = true
	in, c, closer, err := Decompress(r.src)
	if err != nil {
		return err
	}
	r.in, r.comp, r.closeDec = in, c, closer
	return nil
}

// nextLine returns the next line without its newline, or io.EOF.
func (r *Reader) nextLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.buf[r.r:r.w], '\n'); i >= 0 {
			if i >= r.maxLine {
				// A mapped log holds it whole: refused as a read one is.
				return nil, r.longLine()
			}
			line := r.buf[r.r : r.r+i]
			r.r += i + 1
			return line, nil
		}
		if r.eof {
			if r.err != nil {
				// Not an end: what follows is unknown (a file cut
				// shorter while read is mapfile.FaultError).
				return nil, r.err
			}
			if r.r < r.w {
				if r.w-r.r >= r.maxLine {
					return nil, r.longLine()
				}
				line := r.buf[r.r:r.w]
				r.r = r.w
				r.truncated = true
				return line, nil
			}
			return nil, io.EOF
		}
		if r.r > 0 {
			n := copy(r.buf, r.buf[r.r:r.w])
			r.r, r.w = 0, n
		}
		if r.w == len(r.buf) {
			if len(r.buf) >= r.maxLine {
				return nil, r.longLine()
			}
			nb := make([]byte, min(2*len(r.buf), r.maxLine))
			copy(nb, r.buf[:r.w])
			r.buf = nb
		}
		n, err := r.in.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.eof = true
			if fe := (*mapfile.FaultError)(nil); errors.As(err, &fe) {
				// A file cut shorter while read: its name and offset,
				// as a mapped log's fault says it (Do).
				r.err = err
			} else if !errors.Is(err, io.EOF) {
				r.err = fmt.Errorf("mmiotrace: read after line %d: %w", r.line, err)
			}
		}
	}
}

// longLine is the error for the next line, longer than maxLine: a format
// error whatever keep-going says, the same for a read or a mapped log.
func (r *Reader) longLine() error {
	return fmt.Errorf("mmiotrace: line %d: %w: line longer than %d bytes", r.line+1, ErrFormat, r.maxLine)
}

// ReadInto reads the next record into rec, overwriting it. The slices in
// rec alias the reader's buffer until the next call. It returns io.EOF at
// the end of the input and a *ParseError (with the line number) for a bad
// line unless keep-going is set.
//
// The buffer of a Reader from Open of a plain log is a mapping of the
// file: when the file is cut shorter while it is read (a log still being
// written, copied or rotated), a read past its new end faults (SIGBUS).
// Read such a Reader inside Do, which returns that as an error naming the
// file and the offset ("FILE: truncated while reading at offset N"), as
// this package's loops over a Reader (CopyRecords, CountKinds) do.
func (r *Reader) ReadInto(rec *Record) error {
	if r.dropAt != 0 && r.r >= r.dropAt {
		r.dropBehind()
	}
	for {
		// R and W lines of the kernel's shape (nearly all of a log) are
		// parsed in the buffer directly: the parse finds the newline.
		if end, ok := parseRWFast(r.buf[r.r:r.w], rec, true); ok {
			r.r += end + 1
			r.line++
			return nil
		}
		if !r.started {
			if err := r.start(); err != nil {
				return err
			}
		}
		// Other R and W lines are parsed in the buffer too.
		if rest := r.buf[r.r:r.w]; len(rest) > 2 && rest[1] == ' ' && (rest[0] == 'R' || rest[0] == 'W') {
			if end, f := parseRWFields(rest, rec); f == "" && end < len(rest) && rest[end] == '\n' {
				rec.Kind = KindRead
				if rest[0] == 'W' {
					rec.Kind = KindWrite
				}
				rec.Line, rec.Text = rest[:end], nil
				r.r += end + 1
				r.line++
				return nil
			}
		}
		line, err := r.nextLine()
		if err != nil {
			return err
		}
		r.line++
		if f := parseLine(line, rec); f != "" {
			if r.truncated {
				// The input ends inside this line: it is cut, not bad.
				// Truncated reports it; the partial line is dropped.
				return io.EOF
			}
			perr := &ParseError{Line: r.line, Kind: rec.Kind, Field: f}
			if !r.keepGoing {
				return perr
			}
			if r.firstBad == nil {
				r.firstBad = perr
			}
			r.skipped++
			continue
		}
		if rec.Kind == KindMark {
			if n, ok := rec.Lost(); ok {
				r.lost += n
			}
		}
		return nil
	}
}

// Do runs fn, which reads r (ReadInto and the records' slices) on the
// calling goroutine, and returns its error; a read of a mapped file cut
// shorter meanwhile is a *mapfile.FaultError, "FILE: truncated while
// reading at offset N", instead of a crash. The guard costs once per
// call, not per record.
func (r *Reader) Do(fn func() error) error {
	if !r.mapped {
		return fn()
	}
	return mapfile.Do(fn)
}

// Read returns the next record as a new Record that owns its memory.
func (r *Reader) Read() (*Record, error) {
	var rec Record
	if err := r.ReadInto(&rec); err != nil {
		return nil, err
	}
	return rec.Clone(), nil
}

// dropBehindLag is how far behind the reading position dropBehind drops
// pages: well past the line just returned, whose slices ReadInto's
// caller may still hold.
const dropBehindLag = 1 << 20

// DropBehind makes a Reader of a mapped file (Open maps a plain log)
// drop the pages it has read from the process's resident set as it goes,
// so that reading a log of any size keeps the memory flat; the pages are
// read again from the file if touched. It is a no-op for other Readers.
// Only for callers that keep nothing of the records they have read but
// the last (ReadInto's rule: its slices alias the buffer).
func (r *Reader) DropBehind() {
	if r.closeDec != nil && r.in == nil && r.src == nil {
		r.dropAt = dropEvery + dropBehindLag
	}
}

// dropBehind drops the pages before r.r - dropBehindLag.
func (r *Reader) dropBehind() {
	end := r.r - dropBehindLag
	dropMapped(r.buf[r.dropped:end])
	r.dropped = end &^ 4095
	r.dropAt = r.dropped + dropEvery + dropBehindLag
}
