//go:build linux

package intelpt

import (
	"os"

	"github.com/iotap/iotap/internal/mapfile"
	iunix "github.com/iotap/iotap/internal/unix"
)

// mapFile maps the size bytes of f read-only.
func mapFile(f *os.File, size int) (*mapfile.Mapping, bool) {
	m, err := mapfile.Map(f, size)
	return m, err == nil
}

// dropPages takes the page-aligned part b of a mapping out of the
// resident set (it stays readable).
func dropPages(b []byte) { iunix.DropPages(b) }

// canMap says that mapFile maps.
const canMap = true
