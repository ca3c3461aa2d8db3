package unix

import (
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
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
	// A write to user_events_data copies into the trace ring buffer and
	// never waits, so the scheduler need not be told (RawSyscall).
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	return int(n), e
}

// IovecPair is two struct iovec (base, size_t length), for a user_events
// write: the write index, then the payload. Base is a pointer, not an
// address, so that the garbage collector and stack copying see it.
type IovecPair [2]struct {
	Base unsafe.Pointer
	Len  uintptr
}

// WritevPair issues writev(fd, iov, n) with n of 1 or 2 as a raw system
// call (user_events writes never block). It is small enough to inline, so
// a caller reaches the kernel through two calls (syscall.RawSyscall6 and
// the runtime's SYSCALL stub), and never allocates.
func WritevPair(fd int, iov *IovecPair, n int) Errno {
	_, _, e := syscall.RawSyscall6(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(iov)), uintptr(n), 0, 0, 0)
	return e
}

// Pwrite issues pwrite(2) at offset 0 as a raw system call: on
// user_events_data, one buffer holding the write index and the payload.
// Unlike writev(2) it needs no iovec and skips the file's f_pos mutex,
// which the kernel takes for every write of a multi-threaded process.
func Pwrite(fd int, b unsafe.Pointer, n int) Errno {
	_, _, e := syscall.RawSyscall6(syscall.SYS_PWRITE64, uintptr(fd), uintptr(b), uintptr(n), 0, 0, 0)
	return e
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

// ForkProbe modes.
const (
	ProbeFollow     = iota // wait for the word to set, writev, wait for it to clear
	ProbeCloseSleep        // close fd, sleep polls ms, exit 0
	ProbeExec              // execve(argv[0], argv, nil)
)

// ForkProbe forks the process for tests of the fork semantics of
// user_events enable words. The child runs no Go runtime code, only raw
// system calls. In ProbeFollow mode it exits with:
//
//	0  it saw *word become non-zero, wrote iov to fd with writev(2)
//	   (skipped when iov is empty), then saw *word become zero again
//	10 *word stayed zero for polls milliseconds
//	11 the writev failed
//	12 *word stayed non-zero for polls milliseconds
//
// In ProbeExec mode argv must be NUL-terminated strings and a nil
// terminator, prepared by the parent; the child exits 13 if execve fails.
// The parent gets the child's pid.
//
//go:nosplit
//go:norace
func ForkProbe(word *uint32, fd int, iov []Iovec, mode int, polls int, argv []*byte) (int, error) {
	var iovp, argvp uintptr
	if len(iov) > 0 {
		iovp = uintptr(unsafe.Pointer(&iov[0]))
	}
	if len(argv) > 0 {
		argvp = uintptr(unsafe.Pointer(&argv[0]))
	}
	niov := uintptr(len(iov))
	r1, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	if r1 != 0 {
		runtime.KeepAlive(iov)
		runtime.KeepAlive(argv)
		return int(r1), nil
	}
	// Child.
	ts := syscall.Timespec{Nsec: 1000000}
	switch mode {
	case ProbeExec:
		syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(argv[0])), argvp, 0)
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 13, 0, 0)
	case ProbeCloseSleep:
		syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
		for i := 0; i < polls; i++ {
			syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
	code := uintptr(10)
	for i := 0; i < polls; i++ {
		if atomic.LoadUint32(word) != 0 {
			code = 0
			break
		}
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	if code == 0 && iovp != 0 {
		if _, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(fd), iovp, niov); e != 0 {
			code = 11
		}
	}
	if code == 0 {
		code = 12
		for i := 0; i < polls; i++ {
			if atomic.LoadUint32(word) == 0 {
				code = 0
				break
			}
			syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
	}
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, code, 0, 0)
	return 0, nil
}

// WaitExit waits for the child pid and returns its exit status (-1 when
// it was killed by a signal).
func WaitExit(pid int) (int, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, os.NewSyscallError("wait4", err)
		}
		break
	}
	if ws.Exited() {
		return ws.ExitStatus(), nil
	}
	return -1, nil
}

// ClockThreadCPU is CLOCK_THREAD_CPUTIME_ID for ClockNS: CPU time of the
// calling thread, which benchmarks compare between Go and C so that the
// Go runtime's other threads (sysmon) are not billed to the write.
const ClockThreadCPU = unix.CLOCK_THREAD_CPUTIME_ID

// Perf constants for reading tracepoints (user events) through perf rings.
const (
	PerfTypeTracepoint = unix.PERF_TYPE_TRACEPOINT
	PerfSampleRaw      = unix.PERF_SAMPLE_RAW
)
