package unix

import (
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Errno values callers may test for with errors.Is.
const (
	ENOENT     = unix.ENOENT
	EPERM      = unix.EPERM
	EACCES     = unix.EACCES
	EINVAL     = unix.EINVAL
	EBUSY      = unix.EBUSY
	EBADF      = unix.EBADF
	EFAULT     = unix.EFAULT
	EMFILE     = unix.EMFILE
	ENODEV     = unix.ENODEV
	ENOTTY     = unix.ENOTTY
	EAGAIN     = unix.EAGAIN
	EINTR      = unix.EINTR
	ENOSPC     = unix.ENOSPC
	EEXIST     = unix.EEXIST
	EADDRINUSE = unix.EADDRINUSE
	EOPNOTSUPP = unix.EOPNOTSUPP
	E2BIG      = unix.E2BIG
	ENOMEM     = unix.ENOMEM
)

// Errno is a raw error number from the kernel.
type Errno = unix.Errno

// FD owns a file descriptor. The zero value is not valid; use NewFD or Open.
type FD struct {
	raw  int
	once sync.Once
	err  error
}

// NewFD takes ownership of raw.
func NewFD(raw int) *FD { return &FD{raw: raw} }

// Open opens path with open(2) flags (O_CLOEXEC is always added).
func Open(path string, flags int, perm uint32) (*FD, error) {
	raw, err := unix.Open(path, flags|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return NewFD(raw), nil
}

// Int returns the raw descriptor. It stays valid until Close.
func (fd *FD) Int() int { return fd.raw }

// Close closes the descriptor once; later calls return the first result.
func (fd *FD) Close() error {
	if fd == nil {
		return nil
	}
	fd.once.Do(func() {
		if err := unix.Close(fd.raw); err != nil {
			fd.err = os.NewSyscallError("close", err)
		}
		fd.raw = -1
	})
	return fd.err
}

// Ioctl issues ioctl(fd, req, arg) with a pointer argument.
func Ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return os.NewSyscallError("ioctl", e)
	}
	return nil
}

// IoctlInt issues ioctl(fd, req, arg) with an integer argument and returns
// the ioctl's return value.
func IoctlInt(fd int, req uint, arg uintptr) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), arg)
	if e != 0 {
		return 0, os.NewSyscallError("ioctl", e)
	}
	return int(r), nil
}

// Mmap maps length bytes of fd at offset.
func Mmap(fd int, offset int64, length int, prot, flags int) ([]byte, error) {
	b, err := unix.Mmap(fd, offset, length, prot, flags)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}

// DropPages takes b, a page-aligned part of a read-only file mapping
// made by MmapFile that its user is done with, out of the process's
// resident set (madvise MADV_DONTNEED; the page cache keeps the pages).
// The range stays mapped and readable (a later read faults the page back
// in), so nothing else can be mapped into it, and Munmap of the whole
// mapping unmaps only the mapping. (Unmapping the range instead would
// leave a hole that the runtime or a new thread's stack may be given, and
// the final Munmap would then unmap that memory too.)
func DropPages(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := unix.Madvise(b, unix.MADV_DONTNEED); err != nil {
		return os.NewSyscallError("madvise", err)
	}
	return nil
}

// ProtectNone makes the page-aligned part b of a mapping unreadable
// (mprotect PROT_NONE): tests use it to prove that a range dropped by
// DropPages is never read again (a read then faults).
func ProtectNone(b []byte) error {
	if err := unix.Mprotect(b, unix.PROT_NONE); err != nil {
		return os.NewSyscallError("mprotect", err)
	}
	return nil
}

// Munmap unmaps a mapping made by Mmap.
func Munmap(b []byte) error {
	if err := unix.Munmap(b); err != nil {
		return os.NewSyscallError("munmap", err)
	}
	return nil
}

// Protection and mapping flags for Mmap.
const (
	PROT_READ  = unix.PROT_READ
	PROT_WRITE = unix.PROT_WRITE
	MAP_SHARED = unix.MAP_SHARED
	O_RDONLY   = unix.O_RDONLY
	O_WRONLY   = unix.O_WRONLY
	O_RDWR     = unix.O_RDWR
	O_NONBLOCK = unix.O_NONBLOCK
)

// KernelRelease returns uname -r.
func KernelRelease() (string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", os.NewSyscallError("uname", err)
	}
	return unix.ByteSliceToString(u.Release[:]), nil
}

// Geteuid returns the effective user id.
func Geteuid() int { return unix.Geteuid() }

// Capabilities returns the effective capability set of the calling thread
// as a bit mask indexed by capability number (CAP_SYS_ADMIN = 21, …).
func Capabilities() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, os.NewSyscallError("capget", err)
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}

// Capability numbers used by iotap.
const (
	CAP_DAC_OVERRIDE = unix.CAP_DAC_OVERRIDE
	CAP_SYS_ADMIN    = unix.CAP_SYS_ADMIN
	CAP_SYS_RAWIO    = unix.CAP_SYS_RAWIO
	CAP_PERFMON      = unix.CAP_PERFMON
)
