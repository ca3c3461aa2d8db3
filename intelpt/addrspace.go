package intelpt

import (
	"fmt"
	"sort"
	"strconv"
)

// Mapping is a range of a process's address space mapped from a file.
type Mapping struct {
	Start, End uint64 // [Start, End)
	PgOff      uint64 // file offset of Start
	File       string
	BuildID    []byte // from MMAP2 or perf's build-id table; nil when unknown
	Time       uint64 // sample time of the mmap record (0 when none)
}

// FileOffset returns the offset in the file of address addr (inside m).
func (m *Mapping) FileOffset(addr uint64) uint64 { return m.PgOff + (addr - m.Start) }

// Process is the address space of one process as the sideband describes
// it: its executable mappings (sorted, non-overlapping) after its last exec.
type Process struct {
	PID      int32
	Comm     string
	Threads  []int32 // threads seen (COMM, FORK, ITRACE_START, samples' tid)
	Mappings []Mapping
}

// Lookup returns the mapping holding addr, or nil (binary search).
func (p *Process) Lookup(addr uint64) *Mapping {
	ms := p.Mappings
	i := sort.Search(len(ms), func(i int) bool { return ms[i].End > addr })
	if i < len(ms) && ms[i].Start <= addr {
		return &ms[i]
	}
	return nil
}

// AddressSpaces are the processes of a sideband plus the kernel's mappings
// (MMAP records of pid -1: the kernel image and modules).
type AddressSpaces struct {
	Procs  map[int32]*Process
	Kernel Process
	// Overlaps counts mappings that replaced part of an earlier one (as
	// mmap(MAP_FIXED) does: the later record wins, as in the kernel).
	Overlaps int
	// OverlapNotes say which mapping replaced which, one line each
	// ("pid 101: 500800-501000 00000000 /bin/other replaces part of
	// 500000-502000 00000000 /bin/prog"), the first maxOverlapNotes.
	OverlapNotes []string
	// Exited lists processes whose EXIT record was seen.
	Exited map[int32]bool
}

// maxOverlapNotes bounds AddressSpaces.OverlapNotes.
const maxOverlapNotes = 32

// note records which mappings of p m is about to replace.
func (a *AddressSpaces) note(p *Process, who string, m Mapping) {
	if len(a.OverlapNotes) >= maxOverlapNotes || m.End <= m.Start {
		return
	}
	ms := p.Mappings
	for i := sort.Search(len(ms), func(i int) bool { return ms[i].End > m.Start }); i < len(ms) && ms[i].Start < m.End && len(a.OverlapNotes) < maxOverlapNotes; i++ {
		a.OverlapNotes = append(a.OverlapNotes, who+": "+m.String()+" replaces part of "+ms[i].String())
	}
}

// Process returns the process pid (nil when the sideband never named it).
func (a *AddressSpaces) Process(pid int32) *Process { return a.Procs[pid] }

func (a *AddressSpaces) proc(pid int32) *Process {
	p := a.Procs[pid]
	if p == nil {
		p = &Process{PID: pid}
		a.Procs[pid] = p
	}
	return p
}

func (p *Process) addThread(tid int32) {
	for _, t := range p.Threads {
		if t == tid {
			return
		}
	}
	p.Threads = append(p.Threads, tid)
}

// insert adds m, cutting the parts of existing mappings it overlaps; it
// returns the number of mappings it overlapped.
func (p *Process) insert(m Mapping) int {
	if m.End <= m.Start {
		return 0
	}
	ms := p.Mappings
	i := sort.Search(len(ms), func(i int) bool { return ms[i].End > m.Start })
	j := i
	var keep []Mapping
	n := 0
	for j < len(ms) && ms[j].Start < m.End {
		o := ms[j]
		n++
		if o.Start < m.Start {
			left := o
			left.End = m.Start
			keep = append(keep, left)
		}
		if o.End > m.End {
			right := o
			right.PgOff += m.End - o.Start
			right.Start = m.End
			keep = append(keep, right)
		}
		j++
	}
	out := make([]Mapping, 0, len(ms)-(j-i)+len(keep)+1)
	out = append(out, ms[:i]...)
	for _, k := range keep {
		if k.End <= m.Start {
			out = append(out, k)
		}
	}
	out = append(out, m)
	for _, k := range keep {
		if k.Start >= m.End {
			out = append(out, k)
		}
	}
	out = append(out, ms[j:]...)
	p.Mappings = out
	return n
}

// AddressSpaces builds the processes' address spaces from the sideband
// records (in the order given; Merge sorts by time): executable
// MMAP/MMAP2 records add mappings, FORK of a new process copies its
// parent's, COMM with the exec flag starts an empty one. perf records no
// munmap, so a mapping stays until another replaces it. Build-ids come
// from MMAP2 records or, for the same file name, perf's build-id table.
func (s *Sideband) AddressSpaces() *AddressSpaces {
	a := &AddressSpaces{Procs: map[int32]*Process{}, Exited: map[int32]bool{}, Kernel: Process{PID: -1}}
	ids := map[string][]byte{}
	for _, b := range s.BuildIDs {
		ids[b.Filename] = b.BuildID
	}
	for i := range s.Records {
		r := &s.Records[i]
		switch r.Type {
		case PerfRecordMmap, PerfRecordMmap2:
			if !r.Executable() || r.Len == 0 || r.Addr+r.Len < r.Addr {
				continue
			}
			m := Mapping{Start: r.Addr, End: r.Addr + r.Len, PgOff: r.PgOff, File: r.Filename, BuildID: r.BuildID, Time: r.Time}
			if m.BuildID == nil && IsVDSO32(&m) {
				m.BuildID = ids[VDSO32Name] // perf's name for a 32-bit process's vDSO
			}
			if m.BuildID == nil {
				m.BuildID = ids[m.File]
			}
			if r.PID == -1 || r.Misc&PerfMiscCPUModeMask == PerfMiscKernel {
				a.note(&a.Kernel, "kernel", m)
				a.Overlaps += a.Kernel.insert(m)
				continue
			}
			p := a.proc(r.PID)
			p.addThread(r.TID)
			a.note(p, "pid "+strconv.Itoa(int(r.PID)), m)
			a.Overlaps += p.insert(m)
		case PerfRecordComm:
			p := a.proc(r.PID)
			if r.Exec() {
				p.Mappings = nil
			}
			if r.PID == r.TID || p.Comm == "" {
				p.Comm = r.Comm
			}
			p.addThread(r.TID)
		case PerfRecordFork:
			if r.PID != r.PPID { // a new process: it starts with its parent's mappings
				child := a.proc(r.PID)
				if parent := a.Procs[r.PPID]; parent != nil && len(child.Mappings) == 0 {
					child.Mappings = append([]Mapping(nil), parent.Mappings...)
					if child.Comm == "" {
						child.Comm = parent.Comm
					}
				}
			}
			a.proc(r.PID).addThread(r.TID)
		case PerfRecordExit:
			if r.PID == r.TID {
				a.Exited[r.PID] = true
			}
		case PerfRecordItraceStart:
			a.proc(r.PID).addThread(r.TID)
		}
	}
	return a
}

// PIDs returns the process ids in increasing order.
func (a *AddressSpaces) PIDs() []int32 {
	var out []int32
	for pid := range a.Procs {
		out = append(out, pid)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// String describes a mapping like /proc/PID/maps does.
func (m *Mapping) String() string {
	return fmt.Sprintf("%x-%x %08x %s", m.Start, m.End, m.PgOff, m.File)
}
