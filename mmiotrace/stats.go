package mmiotrace

import (
	"fmt"
	"io"
	"math/bits"
	"sort"
)

// RegKey names a register: a BAR-relative location when the address falls
// in a known BAR, else the physical address (BAR nil).
type RegKey struct {
	Dev    PCIAddr
	HasBAR bool
	Width  uint8 // here, in Dev's and HasBAR's word: a key is 24 bytes, not 32
	BAR    int
	Offset uint64 // BAR offset, or the physical address when !HasBAR
}

// String formats the key as "0000:00:03.0/0+0x8" or "0xfebc0008".
func (k RegKey) String() string {
	if k.HasBAR {
		return fmt.Sprintf("%s/%d+0x%x", k.Dev, k.BAR, k.Offset)
	}
	return fmt.Sprintf("0x%x", k.Offset)
}

// KeyOf returns the register key of an access.
func KeyOf(m *BARMap, r *Record) RegKey {
	if loc, ok := m.Lookup(r.Phys); ok {
		return RegKey{Dev: loc.BAR.Addr, HasBAR: true, BAR: loc.BAR.Index, Offset: loc.Offset, Width: r.Width}
	}
	return RegKey{Offset: r.Phys, Width: r.Width}
}

// RegStats counts the accesses of one register.
type RegStats struct {
	Key       RegKey
	Reads     int64
	Writes    int64
	LastValue uint64
	PollLoops int64 // polling loops on this register
	PollReads int64 // reads inside them
	FirstLine int64
	BAR       *BAR // the BAR holding the register, nil outside known BARs
}

// PollLoop is a run of consecutive reads of one register (no other access
// in between).
type PollLoop struct {
	Key       RegKey
	Count     int64
	First     uint64 // first value read
	Last      uint64 // value that ended the loop
	Constant  bool   // every value was the same
	Line      int64  // line of the first read
	StartTime Timestamp
	EndTime   Timestamp
}

// Describe says what the loop waited for: "until bit 3 set", "until bits
// 0,1 cleared", "value 0x0 constant", or "values varied".
func (p *PollLoop) Describe() string {
	if p.Constant {
		return fmt.Sprintf("value 0x%x constant", p.Last)
	}
	set, clr := p.Last&^p.First, p.First&^p.Last
	s := ""
	if set != 0 {
		s = "until " + bitList(set) + " set"
	}
	if clr != 0 {
		if s != "" {
			s += ", "
		} else {
			s = "until "
		}
		s += bitList(clr) + " cleared"
	}
	return s
}

func bitList(v uint64) string {
	var l []int
	for v != 0 {
		b := bits.TrailingZeros64(v)
		l = append(l, b)
		v &^= 1 << b
	}
	word := "bit"
	if len(l) > 1 {
		word = "bits"
	}
	s := ""
	for i, b := range l {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(b)
	}
	return word + " " + s
}

// MapStats counts the accesses through one map id.
type MapStats struct {
	ID            int32
	Phys, Len     uint64
	Reads, Writes int64
}

// Stats is the analysis of a whole log.
type Stats struct {
	Lines   int64
	Kinds   [numKinds]int64
	Lost    uint64
	Skipped int64
	// FirstSkip is the first skipped line's error (with its number).
	FirstSkip error
	// Truncated: the log ends inside a line (see Reader.Truncated).
	Truncated bool
	Regs      []*RegStats // sorted by accesses, most first
	Maps      []*MapStats // sorted by id
	Loops     []PollLoop  // the longest polling loops, longest first
	LoopCount int64       // all polling loops found
	// Code counts the R/W accesses per program counter and register;
	// ZeroPC counts the accesses recorded without a PC (the kernel
	// records PCs only when booted with mmiotrace.trace_pc=1).
	Code   map[CodeKey]*CodeStats
	ZeroPC int64
}

// CodeKey is one program counter accessing one register.
type CodeKey struct {
	PC  uint64
	Reg RegKey
}

// CodeStats counts the accesses of one CodeKey.
type CodeStats struct{ Reads, Writes int64 }

// StatsOptions tunes Analyze.
type StatsOptions struct {
	MinLoop   int64 // reads in a row that make a polling loop (default 4)
	KeepLoops int   // longest loops kept in Stats.Loops (default 20)
	KeepGoing bool
}

// Analyze reads a whole log and counts accesses per register and per map,
// and finds polling loops.
func Analyze(in io.Reader, opt StatsOptions) (*Stats, error) {
	if opt.MinLoop <= 0 {
		opt.MinLoop = 4
	}
	if opt.KeepLoops <= 0 {
		opt.KeepLoops = 20
	}
	st := &Stats{}
	rd := NewReader(in)
	defer rd.Close()
	rd.SetKeepGoing(opt.KeepGoing)
	bars := NewBARMap()
	regs := map[RegKey]*RegStats{}
	st.Code = map[CodeKey]*CodeStats{}
	maps := map[int32]*MapStats{}
	var run PollLoop
	endRun := func() {
		if run.Count >= opt.MinLoop {
			st.LoopCount++
			if rs := regs[run.Key]; rs != nil {
				rs.PollLoops++
				rs.PollReads += run.Count
			}
			st.Loops = insertLoop(st.Loops, run, opt.KeepLoops)
		}
		run = PollLoop{}
	}
	var rec Record
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		st.Kinds[rec.Kind]++
		bars.Observe(&rec)
		switch rec.Kind {
		case KindMap:
			if _, ok := maps[rec.MapID]; !ok {
				maps[rec.MapID] = &MapStats{ID: rec.MapID}
			}
			maps[rec.MapID].Phys, maps[rec.MapID].Len = rec.Phys, rec.Len
			continue
		case KindRead, KindWrite:
		case KindUnknown:
			endRun()
			continue
		default:
			continue
		}
		key := KeyOf(bars, &rec)
		rs := regs[key]
		if rs == nil {
			rs = &RegStats{Key: key, FirstLine: rd.Line()}
			if loc, ok := bars.Lookup(rec.Phys); ok {
				rs.BAR = loc.BAR
			}
			regs[key] = rs
		}
		ms := maps[rec.MapID]
		if ms == nil {
			ms = &MapStats{ID: rec.MapID}
			maps[rec.MapID] = ms
		}
		rs.LastValue = rec.Value
		if rec.PC == 0 {
			st.ZeroPC++
		}
		cs := st.Code[CodeKey{rec.PC, key}]
		if cs == nil {
			cs = &CodeStats{}
			st.Code[CodeKey{rec.PC, key}] = cs
		}
		if rec.Kind == KindWrite {
			cs.Writes++
		} else {
			cs.Reads++
		}
		if rec.Kind == KindWrite {
			rs.Writes++
			ms.Writes++
			endRun()
			continue
		}
		rs.Reads++
		ms.Reads++
		if run.Count > 0 && run.Key == key {
			run.Count++
			if rec.Value != run.Last {
				run.Constant = false
			}
			run.Last, run.EndTime = rec.Value, rec.Time
			continue
		}
		endRun()
		run = PollLoop{Key: key, Count: 1, First: rec.Value, Last: rec.Value, Constant: true, Line: rd.Line(), StartTime: rec.Time, EndTime: rec.Time}
	}
	endRun()
	st.Lines, st.Lost, st.Skipped = rd.Line(), rd.Lost(), rd.Skipped()
	st.FirstSkip, st.Truncated = rd.FirstSkipError(), rd.Truncated()
	for _, r := range regs {
		st.Regs = append(st.Regs, r)
	}
	sort.Slice(st.Regs, func(i, j int) bool {
		a, b := st.Regs[i], st.Regs[j]
		if a.Reads+a.Writes != b.Reads+b.Writes {
			return a.Reads+a.Writes > b.Reads+b.Writes
		}
		return a.FirstLine < b.FirstLine
	})
	for _, m := range maps {
		st.Maps = append(st.Maps, m)
	}
	sort.Slice(st.Maps, func(i, j int) bool { return st.Maps[i].ID < st.Maps[j].ID })
	return st, nil
}

func insertLoop(l []PollLoop, p PollLoop, keep int) []PollLoop {
	i := sort.Search(len(l), func(i int) bool { return l[i].Count < p.Count })
	if i >= keep {
		return l
	}
	l = append(l, PollLoop{})
	copy(l[i+1:], l[i:])
	l[i] = p
	if len(l) > keep {
		l = l[:keep]
	}
	return l
}
