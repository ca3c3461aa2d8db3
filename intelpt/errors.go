package intelpt

import (
	"errors"
	"fmt"

	iunix "github.com/iotap/iotap/internal/unix"
)

// Sentinel errors. Decoding errors are *DecodeError values wrapping one of
// these; test with errors.Is.
var (
	// ErrBadOpcode: the bytes at the offset are not a known packet opcode.
	ErrBadOpcode = errors.New("unknown opcode")
	// ErrBadPacket: the opcode is known but the payload is malformed
	// (reserved bits set, reserved IP compression, empty TNT...).
	ErrBadPacket = errors.New("unknown packet")
	// ErrTruncated: the trace ends in the middle of a packet.
	ErrTruncated = errors.New("truncated packet at end of trace")
	// ErrNoSync: no PSB packet was found.
	ErrNoSync = errors.New("no psb packet found")
	// ErrNotSupported: the machine or kernel cannot do what was asked
	// (capture needs an Intel CPU with the intel_pt PMU).
	ErrNotSupported = iunix.ErrNotSupported
)

// DecodeError is a decoding error at a byte offset of the trace.
type DecodeError struct {
	Offset int64 // offset of the packet's first byte
	Err    error // ErrBadOpcode, ErrBadPacket, ErrTruncated or ErrNoSync
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("intelpt: offset %#x: %v", e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

func decodeErr(off int, err error) error {
	return &DecodeError{Offset: int64(off), Err: err}
}

// ArgError is the error of an argument or option field whose value is
// out of range, before any trace is read: Field names it
// ("DumpInputOptions.Workers", "ComputeStatsFile workers"), Want says
// what is taken.
type ArgError struct {
	Field string
	Value any
	Want  string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("intelpt: %s %v: want %s", e.Field, e.Value, e.Want)
}

// checkWorkers is the *ArgError of a negative count of goroutines given
// as field, nil for 0 (chosen) or more.
func checkWorkers(field string, n int) error {
	if n < 0 {
		return &ArgError{Field: field, Value: n, Want: "0 (chosen by the size of the trace) or more"}
	}
	return nil
}
