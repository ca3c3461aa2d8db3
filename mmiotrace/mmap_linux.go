//go:build linux

package mmiotrace

import (
	"os"

	iunix "github.com/iotap/iotap/internal/unix"
)

// mapFile maps a regular file for zero-copy filtering; ok is false when
// the input is not a regular file of a useful size.
func mapFile(in any) (data []byte, unmap func(), ok bool) {
	f, isFile := in.(*os.File)
	if !isFile {
		return nil, nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 1<<20 || fi.Size() > 1<<40 {
		return nil, nil, false
	}
	off, err := f.Seek(0, 1)
	if err != nil || off != 0 {
		return nil, nil, false
	}
	b, err := iunix.MmapFile(f.Fd(), int(fi.Size()))
	if err != nil {
		return nil, nil, false
	}
	return b, func() { iunix.Munmap(b) }, true
}
