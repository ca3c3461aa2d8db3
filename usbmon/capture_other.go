//go:build !linux

package usbmon

import (
	"context"
	"fmt"
)

// Capture is a live capture; only available on Linux.
type Capture struct{ Reader }

// OpenCapture fails: usbmon exists only on Linux.
func OpenCapture(ctx context.Context, opt CaptureOptions) (*Capture, error) {
	return nil, fmt.Errorf("usbmon capture needs Linux: %w", ErrNotSupported)
}

// Stats returns zero counters.
func (c *Capture) Stats() CaptureStats { return CaptureStats{} }

// Close does nothing.
func (c *Capture) Close() error { return nil }

// Record returns nil.
func (c *Capture) Record() []byte { return nil }

// Path returns "".
func (c *Capture) Path() string { return "" }
