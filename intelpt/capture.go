package intelpt

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"strings"
)

// Mode is the tracing mode of a Trace.
type Mode int

const (
	// PerCPU traces everything that runs on the selected CPUs.
	PerCPU Mode = iota
	// PerThread traces one process as it migrates between CPUs.
	PerThread
)

func (m Mode) String() string {
	if m == PerThread {
		return "per-thread"
	}
	return "per-cpu"
}

// TraceConfig describes a trace: the seed API's "trace config" (mode and
// CPUs) and "buffer config" (chunks of 2^order pages, circular or
// stop-on-full), plus the PT options and filters.
type TraceConfig struct {
	Mode Mode
	CPUs []int // PerCPU: the CPUs to trace (nil: all online CPUs)
	PID  int   // PerThread: the process to trace
	// EnableOnExec starts tracing when the traced process calls exec (used
	// to trace a command from its first instruction).
	EnableOnExec bool

	Chunks int  // number of chunks per buffer (the AUX area holds Chunks × 2^Order pages; a power of two in total)
	Order  uint // log2 of the pages per chunk
	// Circular keeps overwriting the oldest data (snapshot: the AUX area is
	// mapped read-only); otherwise tracing pauses when the buffer is full
	// until it is drained (the AUX area is mapped writable, with aux_tail).
	Circular bool

	Options       Options
	User, Kernel  bool     // trace user and/or kernel mode (both false: both)
	AddrFilters   []string // perf address filters ("filter 0x1000/0x200@/bin/x", "start main @ /bin/x", ...)
	SidebandPages int      // pages of the sideband ring (a power of two; 0: 16)
}

// CPUDescription returns "vendor, model name" from /proc/cpuinfo content.
func CPUDescription(cpuinfo []byte) (vendor, desc string) {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	var model string
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "vendor_id":
			if vendor == "" {
				vendor = v
			}
		case "model name":
			if model == "" {
				model = v
			}
		}
		if vendor != "" && model != "" {
			break
		}
	}
	switch {
	case vendor == "" && model == "":
		return "", "an unknown CPU (no vendor_id in /proc/cpuinfo)"
	case model == "":
		return vendor, vendor
	}
	return vendor, vendor + " " + model
}

// checkSupport decides whether PT capture can work: sysfs is the PMU's
// directory (nil when it does not exist), cpuinfo the content of
// /proc/cpuinfo. The error wraps ErrNotSupported.
func checkSupport(sysfs fs.FS, cpuinfo []byte) (*PMU, error) {
	vendor, desc := CPUDescription(cpuinfo)
	if vendor != "" && vendor != "GenuineIntel" {
		return nil, fmt.Errorf("intelpt: %w: Intel PT needs an Intel CPU with the intel_pt PMU: this is %s", ErrNotSupported, desc)
	}
	if sysfs == nil {
		why := "a CPU without PT or a kernel without CONFIG_PERF_EVENTS and CONFIG_CPU_SUP_INTEL"
		if bytes.Contains(cpuinfo, []byte(" hypervisor")) {
			why = "a virtual machine whose hypervisor does not expose PT to guests"
		}
		return nil, fmt.Errorf("intelpt: %w: Intel PT needs an Intel CPU with the intel_pt PMU: this is %s and %s is missing (%s)", ErrNotSupported, desc, PMUDir, why)
	}
	pmu, err := ReadPMU(sysfs)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotSupported, err)
	}
	if v, ok := pmu.Caps["topa_output"]; ok && v == 0 {
		if s, ok := pmu.Caps["single_range_output"]; !ok || s == 0 {
			return nil, fmt.Errorf("intelpt: %w: this CPU's PT has neither ToPA nor single-range output (caps/topa_output = 0)", ErrNotSupported)
		}
	}
	return pmu, nil
}

// validate checks the buffer geometry and mode.
func (c *TraceConfig) validate(pagesize int) (auxSize uint64, err error) {
	if c.Chunks <= 0 {
		return 0, fmt.Errorf("intelpt: %d chunks: want at least 1", c.Chunks)
	}
	if c.Order > 20 {
		return 0, fmt.Errorf("intelpt: chunk order %d too large", c.Order)
	}
	pages := uint64(c.Chunks) << c.Order
	if pages&(pages-1) != 0 {
		return 0, fmt.Errorf("intelpt: %d chunks of 2^%d pages = %d pages: perf needs a power of two", c.Chunks, c.Order, pages)
	}
	if c.Mode == PerThread && c.PID <= 0 {
		return 0, fmt.Errorf("intelpt: per-thread mode needs a pid")
	}
	if c.SidebandPages != 0 && c.SidebandPages&(c.SidebandPages-1) != 0 {
		return 0, fmt.Errorf("intelpt: %d sideband pages: want a power of two", c.SidebandPages)
	}
	for _, f := range c.AddrFilters {
		if strings.ContainsAny(f, "\n\x00") {
			return 0, fmt.Errorf("intelpt: address filter %q contains a newline or NUL", f)
		}
	}
	return pages * uint64(pagesize), nil
}
