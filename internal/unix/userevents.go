package unix

import (
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// user_events ioctls (include/uapi/linux/user_events.h). The kernel
// encodes them with the size of a pointer (the header passes "struct
// user_reg *"), so the numbers are the same for every 64-bit ABI.
const (
	DIAG_IOCSREG   = 0xC0082A00 // _IOWR('*', 0, struct user_reg *)
	DIAG_IOCSDEL   = 0x40082A01 // _IOW('*', 1, char *)
	DIAG_IOCSUNREG = 0x40082A02 // _IOW('*', 2, struct user_unreg *)
)

// Registration flags of struct user_reg.
const (
	USER_EVENT_REG_PERSIST      = 1 << 0 // Linux 6.4: event survives its last reference
	USER_EVENT_REG_MULTI_FORMAT = 1 << 1 // Linux 6.10: same name, several formats
)

// UserReg is struct user_reg. The kernel struct is packed and 28 bytes
// long; its fields are naturally aligned, so this Go struct has the same
// layout plus 4 bytes of tail padding the kernel never reads (Size says 28).
type UserReg struct {
	Size       uint32
	EnableBit  uint8
	EnableSize uint8
	Flags      uint16
	EnableAddr uint64
	NameArgs   uint64
	WriteIndex uint32
	_          uint32
}

// SizeofUserReg is sizeof(struct user_reg).
const SizeofUserReg = 28

// UserUnreg is struct user_unreg (16 bytes, packed, naturally aligned).
type UserUnreg struct {
	Size        uint32
	DisableBit  uint8
	_           uint8
	_           uint16
	DisableAddr uint64
}

// SizeofUserUnreg is sizeof(struct user_unreg).
const SizeofUserUnreg = 16

// UserEventsRegister issues DIAG_IOCSREG. name must be a NUL-terminated
// command whose address is in reg.NameArgs; it is kept alive here.
func UserEventsRegister(fd int, reg *UserReg, name []byte) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), DIAG_IOCSREG, uintptr(unsafe.Pointer(reg)))
	runtime.KeepAlive(name)
	if e != 0 {
		return os.NewSyscallError("ioctl DIAG_IOCSREG", e)
	}
	return nil
}

// UserEventsUnregister issues DIAG_IOCSUNREG.
func UserEventsUnregister(fd int, u *UserUnreg) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), DIAG_IOCSUNREG, uintptr(unsafe.Pointer(u)))
	if e != 0 {
		return os.NewSyscallError("ioctl DIAG_IOCSUNREG", e)
	}
	return nil
}

// UserEventsDelete issues DIAG_IOCSDEL with a NUL-terminated event name.
func UserEventsDelete(fd int, name []byte) error {
	if len(name) == 0 || name[len(name)-1] != 0 {
		return os.NewSyscallError("ioctl DIAG_IOCSDEL", unix.EINVAL)
	}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), DIAG_IOCSDEL, uintptr(unsafe.Pointer(&name[0])))
	if e != 0 {
		return os.NewSyscallError("ioctl DIAG_IOCSDEL", e)
	}
	return nil
}

// Iovec is struct iovec.
type Iovec = unix.Iovec

// Writev issues writev(2). It does not allocate unless it fails; the
// error is the bare Errno so that hot callers can map it without
// allocating either.
func Writev(fd int, iov []Iovec) (int, Errno) {
	if len(iov) == 0 {
		return 0, 0
	}
	n, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	return int(n), e
}

// MmapAnon maps length bytes of private anonymous memory, read-write.
// The mapping is outside the Go heap: the garbage collector never moves
// or frees it, and fork(2) gives the child its own copy.
func MmapAnon(length int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}

// Read reads from a raw descriptor; the error is the bare Errno (EAGAIN
// on an empty non-blocking trace_pipe_raw).
func Read(fd int, b []byte) (int, error) {
	n, err := unix.Read(fd, b)
	if err != nil {
		return n, err
	}
	return n, nil
}

// Getpid returns the process id.
func Getpid() int { return unix.Getpid() }
