package intelpt

// The block cache: for every instruction start in a section, how many
// instructions from there fall through to the next one (not branches, so
// they need no trace) and how many bytes they take. The block decoder skips
// such a run in one step instead of decoding instruction by instruction
// (libipt's block decoder has a block cache for the same reason). Entries
// are 8 bytes (they are read at random block starts: the smaller, the fewer
// cache misses), filled lazily a whole run at a time, valid for one mode.
// They also hold the decoded instruction after the run (the branch that
// ends the block) when its displacement fits in 20 bits.
//
//	bits  0-1   execution mode (0: not computed)
//	bits  2-13  n: instructions in the run (0: the first one needs the trace)
//	bits 14-29  bytes: length of the run
//	bit  30     the instruction after the run lies inside the section
//	bit  31     bits 32-63 hold that instruction:
//	bits 32-35  its length
//	bits 36-39  its class
//	bits 40-43  its kind (kindDirect as 15)
//	bits 44-63  its displacement (signed)
type blockEntry uint64

func (e blockEntry) mode() ExecMode { return ExecMode(e & 3) }
func (e blockEntry) n() int         { return int(e>>2) & 0xfff }
func (e blockEntry) bytes() uint64  { return uint64(e>>14) & 0xffff }
func (e blockEntry) termIn() bool   { return e&(1<<30) != 0 }

// term returns the cached instruction after the run (size 0: not cached).
func (e blockEntry) term(mode ExecMode) insnEntry {
	if e&(1<<31) == 0 {
		return insnEntry{}
	}
	k := insnKind(e>>40) & 0xf
	if k == 0xf {
		k = kindDirect
	}
	return insnEntry{size: uint8(e>>32) & 0xf, class: InsnClass(e>>36) & 0xf, kind: k, mode: mode, disp: int32(int64(e) >> 44)}
}

func mkBlockEntry(mode ExecMode, n int, bytes uint32, termIn bool, term *insnEntry) blockEntry {
	e := blockEntry(mode) | blockEntry(n)<<2 | blockEntry(bytes)<<14
	if termIn {
		e |= 1 << 30
		if term.size != 0 && term.disp >= -1<<19 && term.disp < 1<<19 && (term.kind < 0xf || term.kind == kindDirect) {
			k := uint64(term.kind)
			if term.kind == kindDirect {
				k = 0xf
			}
			e |= 1<<31 | blockEntry(term.size)<<32 | blockEntry(term.class)<<36 | blockEntry(k)<<40 | blockEntry(uint64(int64(term.disp))<<44)
		}
	}
	return e
}

// maxRun bounds a cached run (12 bits).
const maxRun = 0xfff

// fillRun computes the run at offset off of s in mode and the runs at every
// instruction start inside it, and returns the entry at off. offs is
// scratch space.
func fillRun(s *Section, off uint64, mode ExecMode, offs *[maxRun]uint32) blockEntry {
	if s.blocks == nil {
		s.blocks = make([]blockEntry, len(s.Data))
	}
	n := 0
	o := off
	termIn := false
	var term insnEntry
	for n < maxRun && o < uint64(len(s.Data)) {
		var e insnEntry
		if s.insns != nil {
			e = s.insns[o]
		}
		if e.size == 0 || e.mode != mode {
			code := s.Data[o:]
			if len(code) > maxInsnSize {
				code = code[:maxInsnSize]
			}
			if classify(code, mode, &e) < 0 {
				break
			}
			if s.insns != nil {
				s.insns[o] = e
			}
		}
		if e.class != ClassOther && e.class != ClassPTWrite {
			termIn = o+uint64(e.size) <= uint64(len(s.Data))
			term = e
			break
		}
		offs[n] = uint32(o)
		n++
		o += uint64(e.size)
	}
	end := uint32(o)
	if n == 0 {
		s.blocks[off] = mkBlockEntry(mode, 0, 0, termIn, &term)
	}
	for i := 0; i < n; i++ {
		s.blocks[offs[i]] = mkBlockEntry(mode, n-i, end-offs[i], termIn, &term)
	}
	return s.blocks[off]
}

// skipRun adds the cached run of fall-through instructions at d.ip to blk
// and reports whether the instruction after it is in the same section
// (then the caller may decode it from s directly), with that instruction
// when the cache holds it (size 0 otherwise).
func (d *BlockDecoder) skipRun(blk *Block) (*Section, bool, insnEntry) {
	s := d.lookup(d.ip)
	if s == nil || blk.Truncated || (blk.NInsn != 0 && blk.ISID != s.ID) {
		return nil, false, insnEntry{}
	}
	off := d.ip - s.Addr
	var e blockEntry
	if s.blocks != nil {
		e = s.blocks[off]
	}
	if e.mode() != d.mode || d.mode == ModeUnknown {
		if d.mode == ModeUnknown {
			return nil, false, insnEntry{}
		}
		e = fillRun(s, off, d.mode, &d.runOffs)
	}
	if n := e.n(); n != 0 {
		if blk.NInsn+n > defaultBlockLimit {
			return nil, false, insnEntry{}
		}
		if d.hasICnt {
			if d.icnt+uint32(n) < d.icnt {
				return nil, false, insnEntry{}
			}
			d.icnt += uint32(n)
		}
		d.straight += uint32(n)
		blk.ISID = s.ID
		blk.NInsn += n
		blk.Class = ClassOther
		if !e.termIn() {
			// rare: find the last instruction of the run for EndIP
			ip := d.ip
			for i := 0; i < n; i++ {
				var x insnEntry
				code := s.Data[ip-s.Addr:]
				if len(code) > maxInsnSize {
					code = code[:maxInsnSize]
				}
				classify(code, d.mode, &x)
				blk.EndIP, blk.Class = ip, x.class
				ip += uint64(x.size)
			}
		}
		d.ip += e.bytes()
	}
	return s, e.termIn(), e.term(d.mode)
}
