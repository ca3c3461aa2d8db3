package main

import (
	"errors"

	"github.com/iotap/iotap/intelpt"
)

// ptDecodeErr classifies a decoder error: "truncated", "unknown opcode",
// "unknown packet"; ok is false for io.EOF and other errors.
func ptDecodeErr(err error) (string, bool) {
	switch {
	case errors.Is(err, intelpt.ErrTruncated):
		return "truncated", true
	case errors.Is(err, intelpt.ErrBadOpcode):
		return "unknown opcode", true
	case errors.Is(err, intelpt.ErrBadPacket):
		return "unknown packet", true
	}
	return "", false
}
