package intelpt

import "encoding/binary"

// The block cache: for every instruction start in a section, how the
// decoder gets from there to the next instruction that needs the trace
// without reading it: a chain of fall-through instructions and direct
// jumps and calls inside the section. The block decoder skips such a chain
// in one step instead of decoding instruction by instruction (libipt's
// block decoder has a block cache for the same reason, and also proceeds
// over direct branches). Entries are 16 bytes, filled lazily, valid for one
// execution mode and one branch policy (--block:end-on-call and
// --block:end-on-jump end a block at calls and jumps: such decoders do not
// follow them in the cache).
//
// A chain holds at most one direct call that pushes a return address, so
// that an entry holds all the return-stack effect (the chain stops before
// a second such call, which the decoder then handles as the instruction
// after the chain).
//
// The instruction that ends the chain (the term) is cached in the entry
// when it lies inside the section ("termIn"): its offset, length, class,
// kind and displacement. Without it the chain is one run that reaches the
// end of the section, an undecodable instruction or the run limit, and the
// decoder goes on instruction by instruction.
//
//	w0 bits  0-31  offset of the term in the section
//	w0 bits 32-63  its displacement (signed)
//	w1 bits  0-1   execution mode (0: not computed)
//	w1 bits  2-3   branch policy (see followJumps, followCalls)
//	w1 bits  4-15  n: instructions before the term
//	w1 bit  16     termIn: the term is inside the section and cached
//	w1 bit  17     the chain passes a call: push the return address
//	w1 bits 18-21  term length
//	w1 bits 22-25  term class
//	w1 bits 26-29  term kind (kindDirect as 15)
//	w1 bit  30     the chain passes a direct jump or call
//	w1 bit  31     branch policy reportCalls
//	w1 bits 32-63  offset of the return address of the call; with
//	               reportCalls: bits 32-43 the instructions up to and
//	               including the call, bits 44-63 the return address
//	               relative to the entry's own offset (signed)
type blockEntry struct{ w0, w1 uint64 }

// Branch policy bits of a block cache entry.
const (
	followJumps = 1 << 2
	followCalls = 2 << 2
	// reportCalls (with followCalls): the decoder reports the call a
	// chain passes (Block.CallRet; FlowFlags.CallsInBlock), so the entry
	// also counts the instructions up to it. Only in 64-bit code (where
	// a direct call's last 4 bytes are its displacement) and when the
	// return address is within callNear of the chain's start.
	reportCalls = 1 << 31
	callNear    = 1 << 18
)

func (e blockEntry) key() uint64     { return e.w1 & (0xf | reportCalls) }
func (e blockEntry) n() int          { return int(e.w1>>4) & 0xfff }
func (e blockEntry) termIn() bool    { return e.w1&(1<<16) != 0 }
func (e blockEntry) hasCall() bool   { return e.w1&(1<<17) != 0 }
func (e blockEntry) branches() bool  { return e.w1&(1<<30) != 0 }
func (e blockEntry) termOff() uint64 { return e.w0 & 0xffffffff }
func (e blockEntry) callN() int      { return int(e.w1>>32) & 0xfff }

// callRet returns the offset of the chain's call's return address; pos
// is the offset of the entry.
func (e blockEntry) callRet(pos uint64) uint64 {
	if e.w1&reportCalls == 0 {
		return e.w1 >> 32
	}
	return pos + uint64(int64(e.w1)>>44)
}
func (e blockEntry) termDisp() int32      { return int32(e.w0 >> 32) }
func (e blockEntry) termSize() uint8      { return uint8(e.w1>>18) & 0xf }
func (e blockEntry) termClass() InsnClass { return InsnClass(e.w1>>22) & 0xf }
func (e blockEntry) termKind() insnKind {
	k := insnKind(e.w1>>26) & 0xf
	if k == 0xf {
		k = kindDirect
	}
	return k
}

// chain is a block cache entry being built.
type chain struct {
	n        int
	termOff  uint64
	term     insnEntry
	termIn   bool
	hasCall  bool
	branches bool
	callRet  uint64
	callN    int // instructions up to and including the call
}

// entry returns the chain as the entry at offset pos.
func (c *chain) entry(key, pos uint64) blockEntry {
	var w1 uint64 = key | uint64(c.n)<<4
	w0 := c.termOff
	if c.termIn {
		k := uint64(c.term.kind)
		if c.term.kind == kindDirect {
			k = 0xf
		}
		w1 |= 1<<16 | uint64(c.term.size)<<18 | uint64(c.term.class)<<22 | k<<26
		w0 |= uint64(uint32(c.term.disp)) << 32
	}
	if c.hasCall {
		if key&reportCalls != 0 {
			w1 |= 1<<17 | uint64(c.callN)<<32 | (c.callRet-pos)<<44
		} else {
			w1 |= 1<<17 | c.callRet<<32
		}
	}
	if c.branches {
		w1 |= 1 << 30
	}
	return blockEntry{w0, w1}
}

// maxRun bounds a cached chain (12 bits).
const maxRun = 0xfff

// maxCacheSection: sections this large are not cached (offsets are 32 bits).
const maxCacheSection = 1 << 32

// scanRun adds the fall-through instructions at c.termOff to c until one
// that is not (the term), the run limit, the end of the section or an
// undecodable instruction. With offs, it records the instructions'
// offsets there. It reports whether it stopped at a term inside the
// section.
func scanRun(s *Section, mode ExecMode, c *chain, offs []uint32) bool {
	o := c.termOff
	for c.n < maxRun && o < uint64(len(s.Data)) {
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
			c.termOff = o
			c.term = e
			c.termIn = o+uint64(e.size) <= uint64(len(s.Data))
			return c.termIn
		}
		if offs != nil {
			offs[c.n] = uint32(o)
		}
		c.n++
		o += uint64(e.size)
	}
	c.termOff = o
	c.termIn = false
	return false
}

// fillChain computes the chain at offset off of s for the decoder's mode
// and policy, stores it there and at every instruction of its first run,
// and returns it.
func (d *BlockDecoder) fillChain(s *Section, off uint64, key uint64) blockEntry {
	if s.blocks == nil {
		s.blocks = make([]blockEntry, len(s.Data))
	}
	mode := d.mode
	offs := d.runOffs[:]
	c := chain{termOff: off}
	scanRun(s, mode, &c, offs)
	first := c.n
	report := key&reportCalls != 0
	for c.termIn && c.term.kind == kindDirect && c.n < maxRun-1 {
		// Proceed over a direct jump or call inside the section.
		next := c.termOff + uint64(c.term.size)
		if (c.term.class == ClassJump && key&followJumps == 0) ||
			(c.term.class == ClassCall && (key&followCalls == 0 || (c.hasCall && c.term.disp != 0) ||
				(report && c.term.disp != 0 && (mode != Mode64 || next-off+callNear >= 2*callNear)))) ||
			(c.term.class != ClassJump && c.term.class != ClassCall) {
			break
		}
		target := s.Addr + next + uint64(int64(c.term.disp))
		if target-s.Addr >= uint64(len(s.Data)) {
			break
		}
		save := c
		c.n++
		if c.term.class == ClassCall && c.term.disp != 0 {
			c.hasCall, c.callRet, c.callN = true, next, c.n
		}
		c.branches = true
		c.termOff = target - s.Addr
		// Reuse the target's entry when it is there.
		if t := s.blocks[c.termOff]; t.key() == key && t.termIn() && c.n+t.n() < maxRun && !(c.hasCall && t.hasCall()) &&
			!(report && t.hasCall() && t.callRet(c.termOff)-off+callNear >= 2*callNear) {
			if t.hasCall() {
				c.hasCall, c.callRet, c.callN = true, t.callRet(c.termOff), c.n+t.callN()
			}
			c.n += t.n()
			c.termOff = t.termOff()
			c.term = insnEntry{size: t.termSize(), class: t.termClass(), kind: t.termKind(), mode: mode, disp: t.termDisp()}
			continue
		}
		if !scanRun(s, mode, &c, nil) {
			c = save
			break
		}
	}
	if first == 0 {
		s.blocks[off] = c.entry(key, off)
		return s.blocks[off]
	}
	n, callN := c.n, c.callN
	for i := 0; i < first; i++ {
		c.n, c.callN = n-i, callN-i
		s.blocks[offs[i]] = c.entry(key, uint64(offs[i]))
	}
	return s.blocks[off]
}

// skipRun adds the cached chain at d.ip to blk and reports whether the
// instruction after it (the term) is in the same section (ok); then it is
// in in and d.ip is its address. With reportCalls, end reports that the
// chain passes a call and blk already holds one: nothing was added, the
// block must end.
func (d *BlockDecoder) skipRun(blk *Block, in *insn) (_ *Section, ok, end bool) {
	s := d.lookup(d.ip)
	if s == nil || blk.Truncated || (blk.NInsn != 0 && blk.ISID != s.ID) || d.mode == ModeUnknown || uint64(len(s.Data)) >= maxCacheSection {
		return nil, false, false
	}
	off := d.ip - s.Addr
	key := uint64(d.mode) | d.policy
	var e blockEntry
	if s.blocks != nil {
		e = s.blocks[off]
	}
	if e.key() != key {
		e = d.fillChain(s, off, key)
	}
	n := e.n()
	if n != 0 || e.branches() {
		// The term must fit in the block; near the limits the decoder goes
		// on instruction by instruction.
		if blk.NInsn+n+1 >= defaultBlockLimit || d.straight+uint32(n)+1 > d.straightLimit {
			return nil, false, false
		}
		report := e.hasCall() && key&reportCalls != 0
		if report && blk.CallRet != 0 {
			return nil, false, true
		}
		if d.hasICnt {
			if d.icnt+uint32(n) < d.icnt {
				return nil, false, false
			}
			d.icnt += uint32(n)
		}
		d.straight += uint32(n)
		blk.ISID = s.ID
		blk.Class = ClassOther
		if e.hasCall() {
			ret := e.callRet(off)
			d.rs.push(s.Addr + ret)
			if report {
				// 64-bit code: the call's last 4 bytes are its displacement
				disp := int32(binary.LittleEndian.Uint32(s.Data[ret-4:]))
				blk.CallRet, blk.CallTarget = s.Addr+ret, s.Addr+ret+uint64(int64(disp))
				blk.CallInsn = blk.NInsn + e.callN()
			}
		}
		blk.NInsn += n
		if !e.termIn() {
			// rare (a single run without branches): find the last
			// instruction of the run for EndIP
			ip := d.ip
			for i := 0; i < n; i++ {
				var x insnEntry
				code := s.Data[ip-s.Addr:]
				if len(code) > maxInsnSize {
					code = code[:maxInsnSize]
				}
				classify(code, d.mode, &x)
				blk.EndIP, blk.Class, blk.EndSize, blk.EndDirect = ip, x.class, x.size, x.direct()
				ip += uint64(x.size)
			}
		}
		d.ip = s.Addr + e.termOff()
	}
	if !e.termIn() {
		return nil, false, false
	}
	// Field by field: a composite literal is built in memory byte by byte
	// and then copied with one 8-byte load, which cannot be forwarded
	// from the byte stores (a stall on every block).
	in.size, in.class, in.kind, in.mode, in.disp = e.termSize(), e.termClass(), e.termKind(), d.mode, e.termDisp()
	if s.blocks != nil {
		// Where the decoder goes next is known up to a trace bit: ask for
		// the entries there now.
		next := e.termOff() + uint64(in.size)
		switch in.class {
		case ClassCondJump:
			target := next + uint64(int64(in.disp))
			if next < uint64(len(s.blocks)) && target < uint64(len(s.blocks)) {
				prefetch2(&s.blocks[next], &s.blocks[target])
			}
		case ClassReturn:
			if r := d.rs.peek() - s.Addr; r < uint64(len(s.blocks)) {
				prefetch2(&s.blocks[r], &s.blocks[r])
			}
		}
	}
	return s, true, false
}
