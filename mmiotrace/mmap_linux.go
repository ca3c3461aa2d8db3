//go:build linux

package mmiotrace

import (
	"os"
	"unsafe"

	"github.com/iotap/iotap/internal/mapfile"
	iunix "github.com/iotap/iotap/internal/unix"
)

// mapFile maps a regular file for zero-copy filtering; ok is false when
// the input is not a regular file of a useful size. A read of the mapping
// faults when the file is cut shorter meanwhile: read it under
// mapfile.Protect/Catch.
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
	m, err := mapfile.Map(f, int(fi.Size()))
	if err != nil {
		return nil, nil, false
	}
	return m.Data, func() { m.Close() }, true
}

// mapFileFromStart maps all of the regular file f, whatever its offset
// (ConvertOptions.File); ok is false for anything else and for files
// under 1 MiB.
func mapFileFromStart(f *os.File) (data []byte, unmap func(), ok bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 1<<20 || fi.Size() > 1<<40 {
		return nil, nil, false
	}
	m, err := mapfile.Map(f, int(fi.Size()))
	if err != nil {
		return nil, nil, false
	}
	return m.Data, func() { m.Close() }, true
}

// dropMapped takes the pages of b (from a mapFileFromStart mapping) that
// lie wholly inside it out of the resident set, so that the resident set
// of a converter going through a mapping stays flat.
func dropMapped(b []byte) {
	const page = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((page - p%page) % page)
	hi := len(b) - int((p+uintptr(len(b)))%page)
	if hi-lo >= page {
		iunix.DropPages(b[lo:hi])
	}
}
