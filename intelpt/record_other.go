//go:build !linux

package intelpt

import (
	"context"
	"fmt"
)

// Supported reports whether PT capture can work here: off Linux it
// cannot (the error wraps ErrNotSupported).
func Supported() (*PMU, error) {
	return nil, fmt.Errorf("%w: Intel PT capture needs Linux with the intel_pt PMU", ErrNotSupported)
}

// Record fails off Linux with Supported's error.
func Record(ctx context.Context, dir string, opt RecordOptions) (*RecordResult, error) {
	_, err := Supported()
	return nil, err
}
