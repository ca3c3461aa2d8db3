package tracefs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CPUStats is per_cpu/cpuN/stats: what the ring buffer of one CPU holds and
// lost. Overrun counts events overwritten before they were read; Dropped
// counts events never written because the buffer was full (in
// non-overwrite mode); both mean data was lost.
type CPUStats struct {
	Entries       uint64
	Overrun       uint64
	CommitOverrun uint64
	Bytes         uint64
	OldestEventTS string
	NowTS         string
	Dropped       uint64
	ReadEvents    uint64
}

// Lost returns the number of events this CPU lost.
func (s CPUStats) Lost() uint64 { return s.Overrun + s.CommitOverrun + s.Dropped }

// ParseCPUStats parses the contents of per_cpu/cpuN/stats.
func ParseCPUStats(data []byte) (CPUStats, error) {
	var s CPUStats
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var dst *uint64
		switch k {
		case "entries":
			dst = &s.Entries
		case "overrun":
			dst = &s.Overrun
		case "commit overrun":
			dst = &s.CommitOverrun
		case "bytes":
			dst = &s.Bytes
		case "dropped events":
			dst = &s.Dropped
		case "read events":
			dst = &s.ReadEvents
		case "oldest event ts":
			s.OldestEventTS = v
		case "now ts":
			s.NowTS = v
		}
		if dst != nil {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return s, fmt.Errorf("stats line %d: %s: %w", line, k, err)
			}
			*dst = n
		}
	}
	return s, nil
}

// CPUStats reads per_cpu/cpuN/stats.
func (f *FS) CPUStats(cpu int) (CPUStats, error) {
	if cpu < 0 {
		return CPUStats{}, fmt.Errorf("tracefs: bad cpu %d", cpu)
	}
	b, err := f.ReadFile("per_cpu", "cpu"+strconv.Itoa(cpu), "stats")
	if err != nil {
		return CPUStats{}, err
	}
	return ParseCPUStats(b)
}

// CPUs lists the CPUs that have a per_cpu directory (the CPUs the ring
// buffer covers).
func (f *FS) CPUs() ([]int, error) {
	p, err := f.Path("per_cpu")
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "cpu"); ok {
			if c, err := strconv.Atoi(n); err == nil {
				cpus = append(cpus, c)
			}
		}
	}
	return cpus, nil
}

// TotalLost sums Lost over every CPU.
func (f *FS) TotalLost() (uint64, error) {
	cpus, err := f.CPUs()
	if err != nil {
		return 0, err
	}
	var total uint64
	for _, c := range cpus {
		s, err := f.CPUStats(c)
		if err != nil {
			return total, err
		}
		total += s.Lost()
	}
	return total, nil
}

// OnlineCPUs parses a sysfs CPU list such as /sys/devices/system/cpu/online
// ("0-3,5") into CPU numbers.
func OnlineCPUs(sysfsCPUList string) ([]int, error) {
	b, err := os.ReadFile(sysfsCPUList)
	if err != nil {
		return nil, err
	}
	return ParseCPUList(string(b))
}

// DefaultOnlineCPUs is the sysfs file listing online CPUs.
var DefaultOnlineCPUs = filepath.Join("/sys/devices/system/cpu", "online")

// ParseCPUList parses the kernel's CPU list format ("0-3,5,7-8"), as in
// /sys/devices/system/cpu/online and taken by every --cpu flag: the
// module's one CPU-list parser. Spaces around a part are ignored; an
// empty list is no CPU.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad cpu %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}
