package mmiotrace

import (
	"bufio"
	"io"
)

// Writer writes records in the kernel's text format. Call Flush at the end.
type Writer struct {
	bw  *bufio.Writer
	tmp []byte
}

// NewWriter returns a buffered Writer to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 256<<10), tmp: make([]byte, 0, 512)}
}

// Write formats r as one line.
func (w *Writer) Write(r *Record) error {
	if err := checkRecord(r); err != nil {
		return err
	}
	w.tmp = AppendRecord(w.tmp[:0], r)
	_, err := w.bw.Write(w.tmp)
	return err
}

// WriteLine writes an already formatted line (a newline is added).
func (w *Writer) WriteLine(line []byte) error {
	if _, err := w.bw.Write(line); err != nil {
		return err
	}
	return w.bw.WriteByte('\n')
}

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }
