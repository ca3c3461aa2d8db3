package unix

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// perf_event_open(2) for Intel PT capture (intelpt/capture_linux.go).

// PerfEventAttr is struct perf_event_attr (Ext1 is config1, Ext2 config2).
type PerfEventAttr = unix.PerfEventAttr

// perf_event_attr flag bits (PerfEventAttr.Bits).
const (
	PerfBitDisabled      = unix.PerfBitDisabled
	PerfBitInherit       = unix.PerfBitInherit
	PerfBitExcludeUser   = unix.PerfBitExcludeUser
	PerfBitExcludeKernel = unix.PerfBitExcludeKernel
	PerfBitExcludeHv     = unix.PerfBitExcludeHv
	PerfBitComm          = unix.PerfBitComm
	PerfBitTask          = unix.PerfBitTask
	PerfBitSampleIDAll   = unix.PerfBitSampleIDAll
	PerfBitMmap2         = unix.PerfBitMmap2
	PerfBitContextSwitch = unix.PerfBitContextSwitch
	PerfBitEnableOnExec  = unix.PerfBitEnableOnExec
	PerfAttrSize         = unix.PERF_ATTR_SIZE_VER8
	PerfSampleTID        = unix.PERF_SAMPLE_TID
	PerfSampleTime       = unix.PERF_SAMPLE_TIME
	PerfSampleCPU        = unix.PERF_SAMPLE_CPU
	PerfTypeSoftware     = unix.PERF_TYPE_SOFTWARE
	PerfCountSWDummy     = unix.PERF_COUNT_SW_DUMMY
)

// PerfEventOpen opens a perf event for pid (-1: every task) on cpu (-1: any
// CPU), close-on-exec.
func PerfEventOpen(attr *PerfEventAttr, pid, cpu int) (*FD, error) {
	raw, err := unix.PerfEventOpen(attr, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("perf_event_open", err)
	}
	return NewFD(raw), nil
}

// PerfEnable starts counting/tracing (PERF_EVENT_IOC_ENABLE).
func PerfEnable(fd int) error {
	_, err := IoctlInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0)
	return err
}

// PerfDisable stops counting/tracing (PERF_EVENT_IOC_DISABLE).
func PerfDisable(fd int) error {
	_, err := IoctlInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0)
	return err
}

// PerfSetFilter sets an address filter string (PERF_EVENT_IOC_SET_FILTER),
// e.g. "filter 0x1000/0x500@/usr/bin/x".
func PerfSetFilter(fd int, filter string) error {
	b, err := unix.BytePtrFromString(filter)
	if err != nil {
		return err
	}
	return Ioctl(fd, unix.PERF_EVENT_IOC_SET_FILTER, unsafe.Pointer(b))
}

// Offsets in struct perf_event_mmap_page of the ring buffer control words.
const (
	perfPageDataHead   = 1024
	perfPageDataTail   = 1032
	perfPageDataOffset = 1040
	perfPageDataSize   = 1048
	perfPageAuxHead    = 1056
	perfPageAuxTail    = 1064
	perfPageAuxOffset  = 1072
	perfPageAuxSize    = 1080
)

// PerfPage accesses the control words of a mapped perf_event_mmap_page.
// Heads are loaded and tails stored atomically (the kernel's ordering rules).
type PerfPage struct{ b []byte }

// NewPerfPage wraps the first page of a perf ring mapping.
func NewPerfPage(b []byte) PerfPage { return PerfPage{b: b} }

func (p PerfPage) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&p.b[off])) }

// DataHead is the producer position of the sideband ring.
func (p PerfPage) DataHead() uint64 { return atomic.LoadUint64(p.word(perfPageDataHead)) }

// DataTail is the consumer position of the sideband ring.
func (p PerfPage) DataTail() uint64 { return atomic.LoadUint64(p.word(perfPageDataTail)) }

// SetDataTail releases the sideband ring up to t.
func (p PerfPage) SetDataTail(t uint64) { atomic.StoreUint64(p.word(perfPageDataTail), t) }

// DataArea returns the offset and size of the sideband data in the mapping.
func (p PerfPage) DataArea() (off, size uint64) {
	return *p.word(perfPageDataOffset), *p.word(perfPageDataSize)
}

// AuxHead is the producer position of the AUX area.
func (p PerfPage) AuxHead() uint64 { return atomic.LoadUint64(p.word(perfPageAuxHead)) }

// AuxTail is the consumer position of the AUX area.
func (p PerfPage) AuxTail() uint64 { return atomic.LoadUint64(p.word(perfPageAuxTail)) }

// SetAuxTail releases the AUX area up to t (stop-on-full mode).
func (p PerfPage) SetAuxTail(t uint64) { atomic.StoreUint64(p.word(perfPageAuxTail), t) }

// SetAuxArea tells the kernel where the AUX area will be mapped; it must be
// called before mapping it.
func (p PerfPage) SetAuxArea(off, size uint64) {
	*p.word(perfPageAuxOffset) = off
	*p.word(perfPageAuxSize) = size
}

// Pagesize returns the system page size.
func Pagesize() int { return unix.Getpagesize() }

// Offsets of the time conversion fields of perf_event_mmap_page.
const (
	perfPageLock         = 8
	perfPageCapabilities = 40
	perfPageTimeShift    = 50
	perfPageTimeMult     = 52
	perfPageTimeZero     = 64
	perfPageTimeCycles   = 80
	perfPageTimeMask     = 88
)

// PerfTime is the TSC to perf time conversion of a perf_event_mmap_page
// (cap_user_time_zero: ns = zero + (tsc * mult) >> shift).
type PerfTime struct {
	Shift            uint16
	Mult             uint32
	Zero             uint64
	Cycles, Mask     uint64
	UserTimeZero     bool // cap_user_time_zero: Zero is valid
	UserTimeShort    bool // cap_user_time_short: Cycles and Mask are valid
	UserTimeSupplied bool // cap_user_time
}

// Time reads the page's time conversion under its sequence lock.
func (p PerfPage) Time() PerfTime {
	lock := (*uint32)(unsafe.Pointer(&p.b[perfPageLock]))
	for {
		seq := atomic.LoadUint32(lock)
		caps := atomic.LoadUint64(p.word(perfPageCapabilities))
		t := PerfTime{
			Shift:            *(*uint16)(unsafe.Pointer(&p.b[perfPageTimeShift])),
			Mult:             *(*uint32)(unsafe.Pointer(&p.b[perfPageTimeMult])),
			Zero:             atomic.LoadUint64(p.word(perfPageTimeZero)),
			Cycles:           atomic.LoadUint64(p.word(perfPageTimeCycles)),
			Mask:             atomic.LoadUint64(p.word(perfPageTimeMask)),
			UserTimeSupplied: caps&(1<<3) != 0,
			UserTimeZero:     caps&(1<<4) != 0,
			UserTimeShort:    caps&(1<<5) != 0,
		}
		if seq&1 == 0 && atomic.LoadUint32(lock) == seq {
			return t
		}
	}
}
