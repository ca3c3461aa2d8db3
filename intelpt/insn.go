package intelpt

// Insn is one executed instruction, as reported by the InsnDecoder.
type Insn struct {
	IP          uint64
	Size        uint8 // length in bytes; 0: no instruction (see InsnDecoder.Next)
	Class       InsnClass
	Mode        ExecMode
	ISID        int  // ID of the image section holding the instruction
	Speculative bool // executed speculatively (in a TSX transaction)
	Truncated   bool // the instruction crosses into another section
}

// InsnDecoder reconstructs the executed instructions of a trace one by one,
// with libipt's pt_insn_* semantics. It is built on the BlockDecoder and
// walks each block's instructions from the per-section decode cache, so it
// does not allocate per instruction.
//
// Use: SyncForward, then loop: while the status has StatusEventPending, call
// Event; then Next. Next returns io.EOF at the end of the trace and a
// *FlowError on bad input (then call Resync or SyncForward).
type InsnDecoder struct {
	b      BlockDecoder
	blk    Block
	status int
}

// NewInsnDecoder returns an instruction decoder over trace.
func NewInsnDecoder(trace []byte, cfg FlowConfig) *InsnDecoder {
	cfg.Flags.EndOnCall, cfg.Flags.EndOnJump = false, false
	d := &InsnDecoder{}
	d.b.init(trace, cfg)
	d.b.insnCache = true
	return d
}

// Blocks returns the underlying block decoder (for Offset, Time, ASID...).
func (d *InsnDecoder) Blocks() *BlockDecoder { return &d.b }

// Offset returns the trace offset of the packet being processed.
func (d *InsnDecoder) Offset() int64 { return d.b.Offset() }

// Time returns the TSC estimate at the current position.
func (d *InsnDecoder) Time() (tsc uint64, lostMTC, lostCyc uint32, ok bool) { return d.b.Time() }

func (d *InsnDecoder) syncForward() int {
	d.blk, d.status = Block{}, 0
	st := d.b.syncForward()
	if st >= 0 {
		d.status = st
	}
	return st
}

// SyncForward synchronises on the next PSB; it returns the status bits or
// io.EOF when there is no further PSB.
func (d *InsnDecoder) SyncForward() (int, error) {
	st := d.syncForward()
	if st < 0 {
		return 0, d.b.err(st, d.b.ip)
	}
	return st, nil
}

func (d *InsnDecoder) resync() int {
	d.blk, d.status = Block{}, 0
	st := d.b.resync()
	if st >= 0 {
		d.status = st
	}
	return st
}

// Resync goes on after an error (see BlockDecoder.Resync).
func (d *InsnDecoder) Resync() (int, error) {
	st := d.resync()
	if st < 0 {
		return 0, d.b.err(st, d.b.ip)
	}
	return st, nil
}

// next decodes the next instruction. It returns eEventIgnored when events
// must be read first (in.Size is then 0).
func (d *InsnDecoder) next(in *Insn) int {
	blk := &d.blk
	*in = Insn{IP: blk.IP, Mode: blk.Mode, ISID: blk.ISID, Speculative: blk.Speculative}
	for blk.NInsn == 0 {
		st := d.status
		if st < 0 {
			return st
		}
		if st&stEventPending != 0 {
			return eEventIgnored
		}
		st = d.b.next(blk)
		d.status = st
		in.IP, in.Mode, in.ISID, in.Speculative = blk.IP, blk.Mode, blk.ISID, blk.Speculative
		if blk.NInsn != 0 {
			break
		}
		if st < 0 {
			return st
		}
		if st&stEventPending != 0 {
			return eEventIgnored
		}
	}
	var x insn
	x.ip, x.mode = blk.IP, blk.Mode
	if blk.Truncated && blk.NInsn == 1 {
		if e := classify(blk.Raw[:blk.Size], blk.Mode, &x.insnEntry); e < 0 {
			return e
		}
		x.truncated = true
	} else if e := d.b.decodeInsn(&x); e < 0 {
		return e
	}
	in.Size, in.Class, in.Truncated = x.size, x.class, x.truncated
	blk.NInsn--
	if blk.NInsn != 0 {
		ip, e := x.nextIP()
		if e < 0 {
			return e
		}
		blk.IP = ip
		return 0
	}
	if blk.IP != blk.EndIP {
		return eInternal
	}
	return d.status
}

// Next decodes the next instruction into in and returns the status bits.
// When events come before the next instruction, it returns
// StatusEventPending with in.Size == 0: call Event, then Next again. A
// *FlowError may come with a valid instruction (in.Size != 0): the last one
// before the error.
func (d *InsnDecoder) Next(in *Insn) (int, error) {
	st := d.next(in)
	if st == eEventIgnored {
		return StatusEventPending, nil
	}
	if st < 0 {
		return 0, d.b.err(st, in.IP)
	}
	return st, nil
}

func (d *InsnDecoder) event(ev *Event) int {
	if d.blk.NInsn != 0 {
		return eBadQuery
	}
	st := d.b.eventNext(ev)
	if st < 0 {
		return st
	}
	d.status = st
	return st
}

// Event reads the pending event and returns the new status bits.
func (d *InsnDecoder) Event(ev *Event) (int, error) {
	st := d.event(ev)
	if st < 0 {
		return 0, d.b.err(st, d.b.ip)
	}
	return st, nil
}
