package usbmon

import (
	"errors"
	"fmt"

	iunix "github.com/iotap/iotap/internal/unix"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrFormat: the input is not usbmon data or is corrupt.
	ErrFormat = errors.New("usbmon: bad format")
	// ErrTruncated: the input ends inside a record.
	ErrTruncated = errors.New("usbmon: truncated record")
	// ErrNotSupported: the kernel lacks usbmon (or the requested API).
	ErrNotSupported = iunix.ErrNotSupported
)

// FormatError is a decoding error with its position: Line for text (1-based),
// Offset (byte offset of the record) for binary formats.
type FormatError struct {
	Format Format
	Line   int   // 1-based line number, 0 when not text
	Offset int64 // byte offset of the bad record, -1 when unknown
	Msg    string
	Err    error // ErrFormat or ErrTruncated (or an I/O error)
}

func (e *FormatError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("usbmon: %s line %d: %s", e.Format, e.Line, e.Msg)
	}
	if e.Offset >= 0 {
		return fmt.Sprintf("usbmon: %s offset %d: %s", e.Format, e.Offset, e.Msg)
	}
	return fmt.Sprintf("usbmon: %s: %s", e.Format, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }
