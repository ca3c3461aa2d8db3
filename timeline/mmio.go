package timeline

import (
	"bufio"
	"fmt"
	"io"

	"github.com/iotap/iotap/ksym"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
)

// mmioSource draws an mmiotrace log: one track per PCI device BAR (and
// one for addresses outside any known BAR), every read and write an
// instant named after its register when a database describes the BAR;
// MAP/UNMAP and unknown opcodes are instants; MARK records are markers
// shown on every source; "Lost N events" marks are counted as lost.
type mmioSource struct {
	closer io.Closer
	rd     *mmiotrace.Reader
	in     *InputStats
	rec    mmiotrace.Record

	binder   regdb.Binder // the one BAR -> register naming
	bars     *mmiotrace.BARMap
	tracks   map[*mmiotrace.BAR]*barTrack
	other    uint64
	buf      []byte
	args     []Arg
	unmapped uint64 // physical address of the mapping an UNMAP ends
	syms     *ksym.Table

	// the access Draw drew last, for the overview
	drawnBT  *barTrack
	drawnLoc mmiotrace.Location
	drawnReg *regEntry // nil when not kept
	drawnRW  bool
	otherOv  *ovSeries
	otherMk  bool

	lastBAR *mmiotrace.BAR // the BAR bar returned last, and its track
	lastBT  *barTrack
}

type barTrack struct {
	track uint64
	db    *regdb.DB
	dom   *regdb.Domain
	// regs caches per register access (offset, width and direction) its
	// name and decoded values
	regs map[uint64]*regEntry
	// recent is a direct-mapped cache in front of regs
	recent [64]struct {
		key uint64
		e   *regEntry
	}

	name   string // the track's name
	ov     *ovSeries
	ovMade bool
	ovRegs map[uint64]*ovSeries // by offset<<8 | width
}

// regEntry is what the source knows of one register access shape.
type regEntry struct {
	name  string // "W IMC"
	m     regdb.Match
	named bool
	temp  bool                 // not kept (the BAR's cache is full): caches nothing
	ov    *ovSeries            // its register's overview series, once known
	vals  map[uint64]*regValue // by value (polled registers repeat theirs)
	last  *regValue            // the value looked up last
}

// regValue is one value of a register access: its decoding and the
// encoded instant of its last access.
type regValue struct {
	value   uint64
	decoded string
	pc      uint64
	enc     EventCache
}

// noEventCache turns off the copying of encoded accesses (a test
// compares the output with and without it).
var noEventCache bool

// maxValueCache bounds the values cached per register access shape.
const maxValueCache = 64

// maxNameCache bounds the register names cached per BAR.
const maxNameCache = 4096

// NewMMIOSource adapts an mmiotrace reader to a timeline Source named
// name; db names the registers (nil: the shipped databases of the devices
// they declare). The reader is set to keep going over lines that do not
// parse (counted in Skipped). Close closes r.
func NewMMIOSource(name string, r *mmiotrace.Reader, db *regdb.DB) Source {
	return newMMIOSource(r, &InputStats{Path: name, Kind: KindMMIO}, db)
}

func openMMIO(f io.Closer, br *bufio.Reader, in *InputStats, opt *Options) ([]Source, error) {
	s := newMMIOSource(mmiotrace.NewReader(br), in, opt.DB)
	s.syms = opt.Symbols
	s.closer = f
	return []Source{s}, nil
}

func newMMIOSource(rd *mmiotrace.Reader, in *InputStats, db *regdb.DB) *mmioSource {
	rd.SetKeepGoing(true)
	in.Format = "mmiotrace log"
	in.Clock = "ftrace trace clock (trace_clock, 'local' by default)"
	var dbs []*regdb.DB
	if db != nil {
		dbs = []*regdb.DB{db}
	}
	return &mmioSource{rd: rd, in: in, binder: regdb.Binder{DBs: dbs}, bars: mmiotrace.NewBARMap(), tracks: map[*mmiotrace.BAR]*barTrack{}}
}

func (s *mmioSource) Info() *InputStats { return s.in }
func (s *mmioSource) Close() error {
	s.rd.Close()
	return closeIf(s.closer)
}

func (s *mmioSource) Next() (int64, error) {
	for {
		err := s.rd.ReadInto(&s.rec)
		s.in.Skipped = s.rd.Skipped()
		if err == io.EOF {
			if s.rd.Truncated() {
				s.in.Truncated = true
				s.in.Truncation = fmt.Sprintf("the log ends inside line %d", s.rd.Line())
			}
			return 0, io.EOF
		}
		if err != nil {
			return 0, fmt.Errorf("line %d: %w", s.rd.Line(), err)
		}
		if s.rec.Kind == mmiotrace.KindUnmap {
			// Remember where the mapping was before Observe forgets it.
			s.unmapped = 0
			if m, ok := s.bars.Mapping(s.rec.MapID); ok {
				s.unmapped = m.Phys
			}
		}
		s.bars.Observe(&s.rec)
		switch s.rec.Kind {
		case mmiotrace.KindRead, mmiotrace.KindWrite, mmiotrace.KindMap, mmiotrace.KindUnmap,
			mmiotrace.KindUnknown, mmiotrace.KindMark:
			return int64(s.rec.Time.NS), nil
		}
	}
}

func (s *mmioSource) bar(c *Canvas, b *mmiotrace.BAR) *barTrack {
	if b == s.lastBAR {
		return s.lastBT
	}
	if t, ok := s.tracks[b]; ok {
		s.lastBAR, s.lastBT = b, t
		return t
	}
	name := fmt.Sprintf("%s BAR%d", b.Addr, b.Index)
	if b.Driver != "" {
		name += " (" + b.Driver + ")"
	}
	t := &barTrack{}
	if bd := s.binder.Bind(b); bd != nil {
		t.db, t.dom = bd.DB, bd.Domain
	}
	desc := fmt.Sprintf("PCI %04x:%04x BAR%d at %#x, %#x bytes", b.Vendor, b.Device, b.Index, b.Start, b.Size)
	if t.dom != nil {
		desc += ", registers from domain " + t.dom.Name
	}
	t.name = name
	t.track = c.W.Track(c.Top, name, TrackOptions{Description: desc})
	s.tracks[b] = t
	s.lastBAR, s.lastBT = b, t
	return t
}

func (s *mmioSource) otherTrack(c *Canvas) uint64 {
	if s.other == 0 {
		s.other = c.W.Track(c.Top, "outside known BARs", TrackOptions{})
	}
	return s.other
}

func (s *mmioSource) Draw(c *Canvas, ts uint64) {
	r := &s.rec
	s.drawnRW = false
	a := s.args[:0]
	switch r.Kind {
	case mmiotrace.KindMark:
		if n, ok := r.Lost(); ok {
			s.in.Lost += int64(n)
			c.W.DataLost()
			c.W.Instant(c.Top, ts, "mmio", "events lost", Uint("lost", n))
			c.Lost(ts, n)
			return
		}
		s.in.Markers++
		c.Marker(ts, "mmio", r.Text)
		return
	case mmiotrace.KindMap:
		track := s.otherTrack(c)
		if loc, ok := s.bars.Lookup(r.Phys); ok {
			track = s.bar(c, loc.BAR).track
		}
		c.W.Instant(track, ts, "mmio", "map", Int("map", int64(r.MapID)), Hex("phys", r.Phys), Hex("len", r.Len))
		return
	case mmiotrace.KindUnmap:
		track := c.Top
		if loc, ok := s.bars.Lookup(s.unmapped); ok && s.unmapped != 0 {
			track = s.bar(c, loc.BAR).track
		}
		c.W.Instant(track, ts, "mmio", "unmap", Int("map", int64(r.MapID)))
		return
	}
	// R, W, UNKNOWN
	loc, ok := s.bars.Lookup(r.Phys)
	track := uint64(0)
	var bt *barTrack
	if ok {
		bt = s.bar(c, loc.BAR)
		track = bt.track
		a = append(a, Hex("offset", loc.Offset))
	} else {
		track = s.otherTrack(c)
		a = append(a, Hex("phys", r.Phys))
	}
	if r.Kind == mmiotrace.KindUnknown {
		c.W.Instant(track, ts, "mmio", "unknown opcode", append(a, Str("opcode", fmt.Sprintf("% x", r.Opcode[:])))...)
		return
	}
	s.drawnBT, s.drawnLoc, s.drawnRW, s.drawnReg = bt, loc, true, nil
	s.in.Accesses++
	op := "R"
	if r.Kind == mmiotrace.KindWrite {
		op = "W"
	}
	name := op
	var v *regValue
	if bt != nil {
		e := s.reg(bt, loc, op, r)
		if !e.temp {
			s.drawnReg = e
		}
		if e.named {
			s.in.Named++
			name = e.name
		}
		// Polled registers repeat their values: the access is written as
		// a copy of the last one with the same value and PC.
		if v = e.last; v == nil || v.value != r.Value {
			if v = e.vals[r.Value]; v != nil {
				e.last = v
			}
		}
		if v != nil && v.pc == r.PC && !noEventCache && c.W.InstantAgain(&v.enc, ts) {
			return
		}
		if v == nil && !e.temp && len(e.vals) < maxValueCache {
			v = &regValue{value: r.Value, pc: r.PC}
			if e.named {
				s.buf = e.m.AppendFormat(s.buf[:0], r.Value)
				v.decoded = string(s.buf)
			}
			if e.vals == nil {
				e.vals = map[uint64]*regValue{}
			}
			e.vals[r.Value] = v
		}
		if e.named {
			if v != nil {
				// interned: written once per file
				a = append(a, Interned("decoded", v.decoded))
			} else {
				s.buf = e.m.AppendFormat(s.buf[:0], r.Value)
				a = append(a, Bytes("decoded", s.buf))
			}
		}
	}
	a = append(a, Hex("value", r.Value), Uint("width", uint64(r.Width)))
	if r.PC != 0 {
		a = append(a, Hex("pc", r.PC))
		if f := s.syms.Name(r.PC); f != "" {
			a = append(a, Str("func", f))
		}
	}
	s.args = a
	if v != nil {
		v.pc = r.PC
		c.W.InstantCached(&v.enc, track, ts, "mmio", name, a...)
		return
	}
	c.W.Instant(track, ts, "mmio", name, a...)
}

// reg returns the entry of the register access r (offset, width and
// direction) in bt, naming it from the register database when bt has
// one; past maxNameCache shapes the entry is made again at each access.
func (s *mmioSource) reg(bt *barTrack, loc mmiotrace.Location, op string, r *mmiotrace.Record) *regEntry {
	key := loc.Offset<<8 | uint64(r.Width)<<1
	if r.Kind == mmiotrace.KindWrite {
		key |= 1
	}
	slot := &bt.recent[(key^key>>9)%uint64(len(bt.recent))]
	if slot.e != nil && slot.key == key {
		return slot.e
	}
	if e := bt.regs[key]; e != nil {
		slot.key, slot.e = key, e
		return e
	}
	e := &regEntry{temp: len(bt.regs) >= maxNameCache}
	if bt.dom != nil {
		if m, _, ok := s.binder.Name(loc, int(r.Width)); ok {
			e.m, e.named = m, true
			s.buf = append(append(s.buf[:0], op...), ' ')
			e.name = string(m.AppendName(s.buf))
		}
	}
	if e.temp {
		return e // named, not kept: bt's cache is full
	}
	if bt.regs == nil {
		bt.regs = map[uint64]*regEntry{}
	}
	bt.regs[key] = e
	return e
}

func (s *mmioSource) Flush(*Canvas, uint64)  {}
func (s *mmioSource) Finish(*Canvas, uint64) {}

// overview counts a read or write in its BAR's series (accesses/s) and in
// its register's (the busiest registers of each BAR are shown, named from
// the register database).
func (s *mmioSource) overview(oi *ovInput, ts uint64) {
	if !s.drawnRW {
		return
	}
	o := oi.ov
	bt := s.drawnBT
	if bt == nil {
		if !s.otherMk {
			s.otherMk = true
			s.otherOv = oi.newSeries("outside known BARs", "accesses/s", ovPlain)
		}
		o.add(s.otherOv, ts, 1)
		return
	}
	if !bt.ovMade {
		bt.ovMade = true
		bt.ov = oi.newSeries(bt.name, "accesses/s", ovGroup)
		bt.ovRegs = map[uint64]*ovSeries{}
	}
	o.add(bt.ov, ts, 1)
	if e := s.drawnReg; e != nil && e.ov != nil {
		o.add(e.ov, ts, 1)
		return
	}
	w := uint64(s.rec.Width)
	key := s.drawnLoc.Offset<<8 | w
	rs, ok := bt.ovRegs[key]
	if !ok {
		name := fmt.Sprintf("+%#x", s.drawnLoc.Offset)
		if bt.dom != nil {
			if m, _, ok := s.binder.Name(s.drawnLoc, int(w)); ok {
				name = string(m.AppendName(nil)) + " " + name
			}
		}
		if w != 4 {
			name += fmt.Sprintf(" w%d", w)
		}
		rs = oi.newSeries(bt.name, name+" accesses/s", ovRegister)
		if len(bt.ovRegs) < maxOvSeries {
			bt.ovRegs[key] = rs
			ok = true
		}
	}
	if e := s.drawnReg; ok && e != nil {
		e.ov = rs // reads and writes of a register share its series
	}
	o.add(rs, ts, 1)
}
