//go:build !linux

package mapfile

import (
	"fmt"
	"os"

	iunix "github.com/iotap/iotap/internal/unix"
)

// Map fails off Linux: the callers read the file instead.
func Map(f *os.File, size int) (*Mapping, error) {
	return nil, fmt.Errorf("mapfile: %s: %w", f.Name(), iunix.ErrNotSupported)
}

// Close does nothing: nothing is mapped off Linux.
func (m *Mapping) Close() error { return nil }
