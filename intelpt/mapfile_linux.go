//go:build linux

package intelpt

import (
	"os"

	iunix "github.com/iotap/iotap/internal/unix"
)

// mapFile maps the size bytes of f read-only.
func mapFile(f *os.File, size int) ([]byte, bool) {
	b, err := iunix.MmapFile(f.Fd(), size)
	return b, err == nil
}

func unmapFile(b []byte) { iunix.Munmap(b) }

// dropPages takes the page-aligned part b of a mapping out of the
// resident set (it stays readable).
func dropPages(b []byte) { iunix.DropPages(b) }
