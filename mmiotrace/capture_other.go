//go:build !linux

package mmiotrace

import (
	"context"
	"fmt"
	"io"
)

// Capture needs Linux's mmiotrace: elsewhere it returns ErrNotSupported.
func Capture(ctx context.Context, out io.Writer, opt CaptureOptions) (CaptureResult, error) {
	return CaptureResult{}, notHere("capturing MMIO (mmiotrace)")
}

// CaptureToFile needs Linux's mmiotrace: elsewhere it returns
// ErrNotSupported.
func CaptureToFile(ctx context.Context, opt FileCaptureOptions) (FileCaptureResult, error) {
	return FileCaptureResult{}, notHere("capturing MMIO (mmiotrace)")
}

// BARTarget is Linux's: elsewhere OpenBARTarget returns ErrNotSupported.
type BARTarget struct{ ReplayTarget }

// OpenBARTarget needs Linux: elsewhere it returns ErrNotSupported.
func OpenBARTarget(sys Sysfs, addr PCIAddr, force bool) (*BARTarget, error) {
	return nil, notHere("writing to a PCI BAR")
}

// Close does nothing.
func (t *BARTarget) Close() error { return nil }

func notHere(what string) error {
	return fmt.Errorf("mmiotrace: %w: %s needs Linux", ErrNotSupported, what)
}
