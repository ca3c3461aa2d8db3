package ptsynth

import "sort"

// Step is one instruction the program ran: its address and the stack
// pointer before it.
type Step struct{ IP, SP uint64 }

// Map is a line of /proc/PID/maps.
type Map struct {
	Start, End, Off uint64
	Perm            string // "r-xp"
	Maj, Min        uint32
	Ino             uint64
	Path            string
}

// Exec reports whether the mapping is executable.
func (m *Map) Exec() bool { return len(m.Perm) == 4 && m.Perm[2] == 'x' }

// Run is a recorded run of a program.
type Run struct {
	PID        int
	Comm       string
	Maps       []Map             // /proc/PID/maps when tracing started
	Code       map[uint64][]byte // executable mappings' bytes by start address
	Steps      []Step            // every instruction, in order
	ExitStatus int
}

// Bytes returns the code at addr (up to the end of its mapping), or nil.
func (r *Run) Bytes(addr uint64) []byte {
	for _, m := range r.Maps {
		if addr >= m.Start && addr < m.End {
			if c, ok := r.Code[m.Start]; ok {
				return c[addr-m.Start:]
			}
		}
	}
	return nil
}

// MapOf returns the mapping holding addr, or nil.
func (r *Run) MapOf(addr uint64) *Map {
	i := sort.Search(len(r.Maps), func(i int) bool { return r.Maps[i].End > addr })
	if i < len(r.Maps) && r.Maps[i].Start <= addr {
		return &r.Maps[i]
	}
	return nil
}
