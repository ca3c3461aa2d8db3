package unix

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// usbmon binary API ioctls (drivers/usb/mon/mon_bin.c), magic 0x92.
const (
	usbmonMagic = 0x92

	iocNone  = 0
	iocWrite = 1
	iocRead  = 2
)

func ioc(dir, nr, size uintptr) uint {
	return uint(dir<<30 | size<<16 | usbmonMagic<<8 | nr)
}

// UsbmonStats is struct mon_bin_stats.
type UsbmonStats struct {
	Queued  uint32 // events queued now
	Dropped uint32 // events dropped since the previous MON_IOCG_STATS
}

// usbmonGet is struct mon_bin_get (64-bit layout).
type usbmonGet struct {
	hdr   uintptr
	data  uintptr
	alloc uint64
}

// usbmonMfetch is struct mon_bin_mfetch.
type usbmonMfetch struct {
	offvec uintptr
	nfetch uint32
	nflush uint32
}

var (
	monIOCQURBLen   = ioc(iocNone, 1, 0)
	monIOCGStats    = ioc(iocRead, 3, unsafe.Sizeof(UsbmonStats{}))
	monIOCTRingSize = ioc(iocNone, 4, 0)
	monIOCQRingSize = ioc(iocNone, 5, 0)
	monIOCXMfetch   = ioc(iocRead|iocWrite, 7, unsafe.Sizeof(usbmonMfetch{}))
	monIOCHMflush   = ioc(iocNone, 8, 0)
	monIOCXGetX     = ioc(iocWrite, 10, unsafe.Sizeof(usbmonGet{}))
)

// UsbmonGetStats issues MON_IOCG_STATS. The kernel resets Dropped.
func UsbmonGetStats(fd int) (UsbmonStats, error) {
	var s UsbmonStats
	err := Ioctl(fd, monIOCGStats, unsafe.Pointer(&s))
	return s, err
}

// UsbmonSetRingSize issues MON_IOCT_RING_SIZE (EINVAL when out of the
// kernel's bounds, EBUSY while mapped).
func UsbmonSetRingSize(fd, size int) error {
	_, err := IoctlInt(fd, monIOCTRingSize, uintptr(size))
	return err
}

// UsbmonRingSize issues MON_IOCQ_RING_SIZE.
func UsbmonRingSize(fd int) (int, error) { return IoctlInt(fd, monIOCQRingSize, 0) }

// UsbmonNextLen issues MON_IOCQ_URB_LEN: data length of the next event.
func UsbmonNextLen(fd int) (int, error) { return IoctlInt(fd, monIOCQURBLen, 0) }

// UsbmonGetX issues MON_IOCX_GETX: the next event's 64-byte header into hdr
// and up to len(data) bytes of its data (ISO descriptors first).
func UsbmonGetX(fd int, hdr *[64]byte, data []byte) error {
	g := usbmonGet{hdr: uintptr(unsafe.Pointer(hdr))}
	if len(data) > 0 {
		g.data = uintptr(unsafe.Pointer(&data[0]))
		g.alloc = uint64(len(data))
	}
	return Ioctl(fd, monIOCXGetX, unsafe.Pointer(&g))
}

// UsbmonMfetch issues MON_IOCX_MFETCH: flushes nflush events, then (waiting
// unless the descriptor is non-blocking) stores up to len(offvec) ring
// offsets. It returns the number fetched and flushed.
func UsbmonMfetch(fd int, offvec []uint32, nflush uint32) (fetched, flushed uint32, err error) {
	m := usbmonMfetch{nfetch: uint32(len(offvec)), nflush: nflush}
	if len(offvec) > 0 {
		m.offvec = uintptr(unsafe.Pointer(&offvec[0]))
	}
	err = Ioctl(fd, monIOCXMfetch, unsafe.Pointer(&m))
	if nflush == 0 {
		m.nflush = 0
	}
	return m.nfetch, m.nflush, err
}

// UsbmonMflush issues MON_IOCH_MFLUSH and returns how many events it removed.
func UsbmonMflush(fd int, n int) (int, error) { return IoctlInt(fd, monIOCHMflush, uintptr(n)) }

// UsbmonPollIn waits up to timeout for fd to become readable and reports whether
// it is.
func UsbmonPollIn(fd int, timeout time.Duration) (bool, error) {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, int(timeout/time.Millisecond))
	if err == unix.EINTR {
		return false, nil
	}
	if err != nil {
		return false, os.NewSyscallError("poll", err)
	}
	return n > 0 && p[0].Revents&unix.POLLIN != 0, nil
}

// ThreadNice returns the nice value of the calling thread.
func ThreadNice() (int, error) {
	// The raw syscall returns 20 - nice (never negative); x/sys/unix
	// returns it unchanged.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		return 0, os.NewSyscallError("getpriority", err)
	}
	return 20 - p, nil
}

// SetThreadNice sets the nice value of the calling thread (Linux nice
// values are per thread; lock the goroutine to its thread first).
func SetThreadNice(n int) error {
	if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), n); err != nil {
		return os.NewSyscallError("setpriority", err)
	}
	return nil
}
