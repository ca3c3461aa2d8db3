package usb

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by *FormatError.
var (
	// ErrShort means the input ended before the structure did.
	ErrShort = errors.New("short input")
	// ErrInvalid means a field holds a value the structure does not allow.
	ErrInvalid = errors.New("invalid value")
)

// FormatError reports malformed input: which structure, at which byte
// offset, and why. It wraps ErrShort or ErrInvalid.
type FormatError struct {
	What   string // structure being decoded, e.g. "configuration descriptor"
	Offset int    // byte offset of the problem within the decoded input
	Msg    string // detail
	Err    error  // ErrShort or ErrInvalid
}

func (e *FormatError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("usb: %s: at byte %d: %v", e.What, e.Offset, e.Err)
	}
	return fmt.Sprintf("usb: %s: at byte %d: %v: %s", e.What, e.Offset, e.Err, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

func shortErr(what string, off, need, have int) error {
	return &FormatError{What: what, Offset: off, Err: ErrShort, Msg: fmt.Sprintf("need %d bytes, have %d", need, have)}
}

func invalidErr(what string, off int, format string, args ...any) error {
	return &FormatError{What: what, Offset: off, Err: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func be16(b []byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) }
func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
func be64(b []byte) uint64 { return uint64(be32(b))<<32 | uint64(be32(b[4:])) }

// ArgError is the error of a ReadOptions field whose value is out of
// range (Prepare, before any input is read): Field names it
// ("ReadOptions.Workers"), Want says what is taken.
type ArgError struct {
	Field string
	Value any
	Want  string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("usb: %s %v: want %s", e.Field, e.Value, e.Want)
}
