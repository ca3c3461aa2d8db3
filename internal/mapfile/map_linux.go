//go:build linux

package mapfile

import (
	"fmt"
	"os"

	iunix "github.com/iotap/iotap/internal/unix"
)

// Map maps the first size bytes of f read-only (size > 0); the mapping
// is named by f.Name() in its faults.
func Map(f *os.File, size int) (*Mapping, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mapfile: %s: cannot map %d bytes", f.Name(), size)
	}
	b, err := iunix.MmapFile(f.Fd(), size)
	if err != nil {
		return nil, fmt.Errorf("mapfile: %s: %w", f.Name(), err)
	}
	m := &Mapping{Data: b, name: f.Name()}
	register(regionOf(b, m.name))
	return m, nil
}

// Close unmaps m; Data must not be used after it. A second Close does
// nothing.
func (m *Mapping) Close() error {
	if m.Data == nil {
		return nil
	}
	unregister(regionOf(m.Data, m.name))
	err := iunix.Munmap(m.Data)
	m.Data = nil
	return err
}
