//go:build linux

package intelpt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/tracefs"
)

// Trace is a Processor Trace session: one perf intel_pt event per CPU (or
// one for a thread), each with a sideband ring and an AUX area made of
// chunks. It follows the seed API: NewTrace allocates the trace and its
// buffers, Start and Stop control tracing, Buffers give each buffer's info
// and data, Free releases everything.
type Trace struct {
	cfg     TraceConfig
	pmu     *PMU
	config  [3]uint64
	bufs    []*Buffer
	started bool
}

// Buffer is the trace buffer of one CPU (or thread).
type Buffer struct {
	CPU       int // -1 in per-thread mode
	fd        *unix.FD
	base      []byte // perf_event_mmap_page + sideband ring
	page      unix.PerfPage
	aux       []byte
	chunkSize int
	sbPages   int
	circular  bool
	sideband  SidebandStats
	sbRaw     []byte
}

// Supported reports whether PT capture can work here; the error wraps
// ErrNotSupported and says why.
func Supported() (*PMU, error) {
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	var sysfs fs.FS
	if st, err := os.Stat(PMUDir); err == nil && st.IsDir() {
		sysfs = os.DirFS(PMUDir)
	}
	return checkSupport(sysfs, cpuinfo)
}

// NewTrace checks PT support, opens the intel_pt events and allocates and
// maps their buffers. Tracing is disabled until Start.
func NewTrace(cfg TraceConfig) (*Trace, error) {
	pmu, err := Supported()
	if err != nil {
		return nil, err
	}
	auxSize, err := cfg.validate(unix.Pagesize())
	if err != nil {
		return nil, err
	}
	words, err := pmu.Config(cfg.Options)
	if err != nil {
		return nil, err
	}
	if n := len(cfg.AddrFilters); n > 0 && uint64(n) > pmu.Caps["num_address_ranges"] {
		return nil, fmt.Errorf("intelpt: %d address filters: %w: this CPU has %d address ranges (caps/num_address_ranges)", n, ErrNotSupported, pmu.Caps["num_address_ranges"])
	}
	t := &Trace{cfg: cfg, pmu: pmu, config: words}
	targets := []int{-1}
	if cfg.Mode == PerCPU {
		targets = cfg.CPUs
		if len(targets) == 0 {
			if targets, err = OnlineCPUs(); err != nil {
				return nil, err
			}
		}
	}
	for _, cpu := range targets {
		b, err := t.open(cpu, auxSize)
		if err != nil {
			t.Free()
			return nil, err
		}
		t.bufs = append(t.bufs, b)
	}
	return t, nil
}

func (t *Trace) attr() *unix.PerfEventAttr {
	a := &unix.PerfEventAttr{
		Type:        t.pmu.Type,
		Size:        unix.PerfAttrSize,
		Config:      t.config[0],
		Ext1:        t.config[1],
		Ext2:        t.config[2],
		Sample_type: unix.PerfSampleTID | unix.PerfSampleTime | unix.PerfSampleCPU,
		Bits:        unix.PerfBitDisabled | unix.PerfBitSampleIDAll | unix.PerfBitMmap2 | unix.PerfBitComm | unix.PerfBitTask | unix.PerfBitContextSwitch | unix.PerfBitExcludeHv,
	}
	if t.cfg.User && !t.cfg.Kernel {
		a.Bits |= unix.PerfBitExcludeKernel
	}
	if t.cfg.Kernel && !t.cfg.User {
		a.Bits |= unix.PerfBitExcludeUser
	}
	if t.cfg.EnableOnExec {
		a.Bits |= unix.PerfBitEnableOnExec
	}
	return a
}

func (t *Trace) open(cpu int, auxSize uint64) (*Buffer, error) {
	pid := -1
	if t.cfg.Mode == PerThread {
		pid = t.cfg.PID
	}
	fd, err := unix.PerfEventOpen(t.attr(), pid, cpu)
	if err != nil {
		hint := ""
		switch {
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			hint = ": needs root or CAP_PERFMON (or a lower /proc/sys/kernel/perf_event_paranoid)"
		case errors.Is(err, unix.EOPNOTSUPP):
			hint = ": " + ErrNotSupported.Error() + " by this kernel or CPU configuration"
		case errors.Is(err, unix.EBUSY):
			hint = ": PT is in use by someone else (another perf session or a hypervisor)"
		}
		return nil, fmt.Errorf("intelpt: opening intel_pt on cpu %d: %w%s", cpu, err, hint)
	}
	b, err := mapBuffer(fd, cpu, t.cfg.SidebandPages)
	if err != nil {
		return nil, err
	}
	b.circular, b.chunkSize = t.cfg.Circular, unix.Pagesize()<<t.cfg.Order
	sb := b.sbPages
	ps := unix.Pagesize()
	auxOff := uint64((1 + sb) * ps)
	b.page.SetAuxArea(auxOff, auxSize)
	prot := unix.PROT_READ
	if !t.cfg.Circular {
		prot |= unix.PROT_WRITE // a writable AUX area means stop-on-full with aux_tail
	}
	if b.aux, err = unix.Mmap(fd.Int(), int64(auxOff), int(auxSize), prot, unix.MAP_SHARED); err != nil {
		b.free()
		return nil, fmt.Errorf("intelpt: mapping the %d-byte AUX area of cpu %d: %w (raise /proc/sys/kernel/perf_event_mlock_kb or use fewer/smaller chunks)", auxSize, cpu, err)
	}
	for _, f := range t.cfg.AddrFilters {
		if err := unix.PerfSetFilter(fd.Int(), f); err != nil {
			b.free()
			return nil, fmt.Errorf("intelpt: address filter %q: %w", f, err)
		}
	}
	return b, nil
}

// mapBuffer maps the perf_event_mmap_page and the sideband ring of fd
// (sbPages pages, 16 when 0); it takes ownership of fd.
func mapBuffer(fd *unix.FD, cpu, sbPages int) (*Buffer, error) {
	if sbPages == 0 {
		sbPages = 16
	}
	b := &Buffer{CPU: cpu, fd: fd, sbPages: sbPages}
	var err error
	if b.base, err = unix.Mmap(fd.Int(), 0, (1+sbPages)*unix.Pagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		fd.Close()
		return nil, fmt.Errorf("intelpt: mapping the perf ring of cpu %d: %w", cpu, err)
	}
	b.page = unix.NewPerfPage(b.base)
	return b, nil
}

// TSC returns the buffer's TSC to perf time conversion from its
// perf_event_mmap_page, or nil when the kernel does not offer it
// (cap_user_time_zero).
func (b *Buffer) TSC() *TSCConversion {
	t := b.page.Time()
	if !t.UserTimeZero {
		return nil
	}
	c := &TSCConversion{Zero: t.Zero, Mult: t.Mult, Shift: t.Shift}
	if t.UserTimeShort {
		c.Cycles, c.Mask, c.Short = t.Cycles, t.Mask, true
	}
	return c
}

// Start enables tracing on every buffer. With EnableOnExec it does
// nothing: the kernel enables tracing when the traced process calls exec.
func (t *Trace) Start() error {
	if t.cfg.EnableOnExec {
		t.started = true
		return nil
	}
	for _, b := range t.bufs {
		if err := unix.PerfEnable(b.fd.Int()); err != nil {
			return fmt.Errorf("intelpt: starting cpu %d: %w", b.CPU, err)
		}
	}
	t.started = true
	return nil
}

// Stop disables tracing on every buffer.
func (t *Trace) Stop() error {
	var first error
	for _, b := range t.bufs {
		if err := unix.PerfDisable(b.fd.Int()); err != nil && first == nil {
			first = fmt.Errorf("intelpt: stopping cpu %d: %w", b.CPU, err)
		}
	}
	t.started = false
	return first
}

// Buffers returns the buffers, one per CPU (one in per-thread mode).
func (t *Trace) Buffers() []*Buffer { return t.bufs }

// Config returns the perf config words and the decoder configuration they
// imply (MTC frequency).
func (t *Trace) Config() ([3]uint64, Config) {
	return t.config, Config{MTCFreq: t.pmu.MTCFreq(t.config[0])}
}

// SampleType is perf_event_attr.sample_type of the events: with
// sample_id_all every sideband record ends with these fields (TID, TIME,
// CPU), which readers of the sideband files need.
func (t *Trace) SampleType() uint64 { return t.attr().Sample_type }

// PMU returns the PMU description read from sysfs.
func (t *Trace) PMU() *PMU { return t.pmu }

// Free stops tracing and releases all buffers.
func (t *Trace) Free() error {
	if t.started {
		t.Stop()
	}
	var first error
	for _, b := range t.bufs {
		if err := b.free(); err != nil && first == nil {
			first = err
		}
	}
	t.bufs = nil
	return first
}

func (b *Buffer) free() error {
	var first error
	if b.aux != nil {
		first = unix.Munmap(b.aux)
		b.aux = nil
	}
	if b.base != nil {
		if err := unix.Munmap(b.base); err != nil && first == nil {
			first = err
		}
		b.base = nil
	}
	if err := b.fd.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// Info returns where tracing stopped (the capture end) and the buffer state.
func (b *Buffer) Info() BufferInfo {
	return ringInfo(uint64(len(b.aux)), b.page.AuxHead(), b.page.AuxTail(), b.circular)
}

// Chunks returns the number of chunks.
func (b *Buffer) Chunks() int { return len(b.aux) / b.chunkSize }

// Chunk returns chunk i of the AUX area (the mapping itself: valid until
// Free, and changing while tracing runs).
func (b *Buffer) Chunk(i int) []byte {
	if i < 0 || (i+1)*b.chunkSize > len(b.aux) {
		return nil
	}
	return b.aux[i*b.chunkSize : (i+1)*b.chunkSize]
}

// Drain appends the trace written since the last Drain to dst. In
// stop-on-full mode it then releases that space to the CPU (aux_tail); in
// circular mode it returns the whole buffer's content in order (call it
// after Stop).
func (b *Buffer) Drain(dst []byte) ([]byte, BufferInfo, error) {
	info := b.Info()
	out, err := auxData(dst, b.aux, info.Head, info.Tail, b.circular)
	if err != nil {
		return dst, info, err
	}
	if !b.circular {
		b.page.SetAuxTail(info.Head)
	}
	return out, info, nil
}

// DrainSideband reads the sideband records (mmap2, comm, itrace_start,
// switch, aux...) written since the last call, appends them to the
// buffer's raw sideband and counts them; AUX records with the truncated,
// partial or collision flag count as loss.
func (b *Buffer) DrainSideband() (SidebandStats, error) {
	off, size := b.page.DataArea()
	if size == 0 || off+size > uint64(len(b.base)) {
		off, size = uint64(unix.Pagesize()), uint64(len(b.base)-unix.Pagesize())
	}
	ring := b.base[off : off+size]
	head := b.page.DataHead()
	tail := b.page.DataTail()
	start := len(b.sbRaw)
	var err error
	b.sbRaw, err = ringCopy(b.sbRaw, ring, tail, head)
	if err != nil {
		return b.sideband, err
	}
	parseSideband(b.sbRaw[start:], &b.sideband)
	b.page.SetDataTail(head)
	return b.sideband, nil
}

// Sideband returns the raw sideband records read so far (perf record
// format, as in perf.data).
func (b *Buffer) Sideband() []byte { return b.sbRaw }

// TimingInfo reads what timing decode needs from the CPU: CPUID leaf 0x15
// (TSC/crystal ratio) from /dev/cpu/0/cpuid and the nominal core:bus ratio
// (MSR_PLATFORM_INFO[15:8]) from /dev/cpu/0/msr. Fields stay zero when the
// cpuid/msr drivers are not loaded or not readable.
func TimingInfo() (c Config) {
	if f, err := os.Open("/dev/cpu/0/cpuid"); err == nil {
		var b [16]byte
		if n, _ := f.ReadAt(b[:], 0x15); n == 16 {
			c.CPUID15EAX = uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
			c.CPUID15EBX = uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24
		}
		f.Close()
	}
	if f, err := os.Open("/dev/cpu/0/msr"); err == nil {
		var b [8]byte
		if n, _ := f.ReadAt(b[:], 0xce); n == 8 {
			c.NomFreq = b[1]
		}
		f.Close()
	}
	return c
}

// OnlineCPUs lists the online CPUs from /sys/devices/system/cpu/online.
func OnlineCPUs() ([]int, error) {
	return tracefs.OnlineCPUs(tracefs.DefaultOnlineCPUs)
}
