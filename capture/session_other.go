//go:build !linux

package capture

import (
	"context"
	"fmt"
)

// Run fails on systems other than Linux: the sources are Linux's.
func Run(ctx context.Context, opt Options) (*Result, error) {
	return nil, fmt.Errorf("capture: %w: capturing usbmon, mmiotrace and user_events needs Linux", ErrNotSupported)
}
