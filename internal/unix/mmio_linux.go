package unix

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Mkfifo creates a named pipe at path with mode perm.
func Mkfifo(path string, perm uint32) error {
	if err := unix.Mkfifo(path, perm); err != nil {
		return fmt.Errorf("mkfifo %s: %w", path, err)
	}
	return nil
}

// MMIORead reads width bytes (1, 2, 4 or 8) at off of a device mapping
// (a sysfs resourceN mmap) with one access of that width.
func MMIORead(m []byte, off uint64, width int) (uint64, error) {
	if err := mmioCheck(m, off, width); err != nil {
		return 0, err
	}
	p := unsafe.Pointer(&m[off])
	switch width {
	case 1:
		return uint64(*(*uint8)(p)), nil
	case 2:
		return uint64(*(*uint16)(p)), nil
	case 4:
		return uint64(atomic.LoadUint32((*uint32)(p))), nil
	default:
		return atomic.LoadUint64((*uint64)(p)), nil
	}
}

// MMIOWrite writes v with one access of width bytes at off of a device
// mapping.
func MMIOWrite(m []byte, off uint64, width int, v uint64) error {
	if err := mmioCheck(m, off, width); err != nil {
		return err
	}
	p := unsafe.Pointer(&m[off])
	switch width {
	case 1:
		*(*uint8)(p) = uint8(v)
	case 2:
		*(*uint16)(p) = uint16(v)
	case 4:
		atomic.StoreUint32((*uint32)(p), uint32(v))
	default:
		atomic.StoreUint64((*uint64)(p), v)
	}
	return nil
}

func mmioCheck(m []byte, off uint64, width int) error {
	if width != 1 && width != 2 && width != 4 && width != 8 {
		return fmt.Errorf("mmio: bad width %d", width)
	}
	if off%uint64(width) != 0 {
		return fmt.Errorf("mmio: offset %#x not aligned to width %d", off, width)
	}
	if off >= uint64(len(m)) || uint64(len(m))-off < uint64(width) {
		return fmt.Errorf("mmio: offset %#x+%d outside the %#x-byte mapping", off, width, len(m))
	}
	return nil
}

// MmapFile maps the first size bytes of an open file read-only and
// shared, for zero-copy parsing of large logs. Unmap with Munmap.
func MmapFile(fd uintptr, size int) ([]byte, error) {
	b, err := unix.Mmap(int(fd), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	return b, nil
}

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
