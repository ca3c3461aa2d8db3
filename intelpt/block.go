package intelpt

import (
	"fmt"
	"io"
)

// Block is a sequence of instructions that ran one after the other: the
// block decoder's unit. NInsn instructions from IP to EndIP; the
// instructions in between are found by decoding forward from IP (every
// instruction but the last one falls through or is a direct jump or call).
type Block struct {
	IP, EndIP uint64
	NInsn     int
	Mode      ExecMode
	Class     InsnClass // class of the last instruction
	// EndSize is the length of the last instruction, EndDirect whether it
	// is a branch whose target is encoded in it (a relative jump or call,
	// jmpabs): call trackers need both (where a call returns to, whether it
	// was indirect) without decoding it again.
	EndSize     uint8
	EndDirect   bool
	ISID        int  // ID of the image section holding the block
	Speculative bool // executed speculatively (in a TSX transaction)
	// Truncated: the last instruction crosses into another section; its
	// bytes are in Raw[:Size].
	Truncated bool
	Size      uint8
	Raw       [maxInsnSize]byte
	// With FlowFlags.CallsInBlock, a direct call inside the block: its
	// return address (0: none), its target, and the number of the block's
	// instructions up to and including it (the rest ran from CallTarget).
	CallRet, CallTarget uint64
	CallInsn            int
}

// FlowFlags select optional behaviour of the flow decoders (libipt's
// pt_conf_flags for the instruction and block decoders).
type FlowFlags struct {
	EndOnCall     bool // end a block after a call (block decoder)
	EndOnJump     bool // end a block after a jump (block decoder)
	TickEvents    bool // report EvTick when the time changes at a branch
	IFlagsEvents  bool // report EvIFlags (RFLAGS.IF changes)
	KeepTcalOnOVF bool // keep the timing calibration across overflows
	// CallsInBlock (block decoder): like EndOnCall, except that in 64-bit
	// code a direct call the block cache follows stays inside the block
	// and is reported in Block.CallRet, CallTarget and CallInsn (at most
	// one per block): a call tracker sees every call with fewer blocks.
	CallsInBlock bool
	// CondInBlock (block decoder): a conditional branch does not end the
	// block when the TNT packet that holds its bit holds more bits: the
	// block goes on at the branch's successor. (No event or time update
	// can come between two bits of one TNT packet, so a caller that only
	// looks at where blocks end sees the same trace with fewer blocks.)
	// Not with TickEvents.
	CondInBlock bool
}

// AddrFilter is the IA32_RTIT_CTL.ADDRn_CFG / ADDRn_A / ADDRn_B setting the
// trace was recorded with (used for erratum SKL014).
type AddrFilter struct {
	Cfg  uint64 // 4 bits per filter
	A, B [numAddrFilters]uint64
}

func (f *AddrFilter) cfg(n int) uint64 { return (f.Cfg >> (4 * n)) & 0xf }

// SetCfg sets ADDRn_CFG of filter n (0-3) to v, a 4-bit value (0 off, 1
// filter, 2 stop), as ptxed's --filter:addrN_cfg does.
func (f *AddrFilter) SetCfg(n int, v uint64) error {
	if n < 0 || n >= numAddrFilters {
		return fmt.Errorf("no address filter %d", n)
	}
	if v > 15 {
		return fmt.Errorf("value too big: %d", v)
	}
	f.Cfg = f.Cfg&^(0xf<<(4*n)) | v<<(4*n)
	return nil
}

// check reports whether addr may be traced: 1 yes, 0 no.
func (f *AddrFilter) check(addr uint64) int {
	for n := 0; n < numAddrFilters; n++ {
		if f.cfg(n) == addrCfgStop && f.A[n] <= addr && addr <= f.B[n] {
			return 0
		}
	}
	for n := 0; n < numAddrFilters; n++ {
		if f.cfg(n) == addrCfgFilter && f.A[n] <= addr && addr <= f.B[n] {
			return 1
		}
	}
	for n := 0; n < numAddrFilters; n++ {
		if f.cfg(n) == addrCfgFilter {
			return 0
		}
	}
	return 1
}

// FlowConfig configures the instruction and block decoders.
type FlowConfig struct {
	Config            // packet and timing configuration, errata
	Flags  FlowFlags  // decoder flags
	Filter AddrFilter // address filter configuration (for SKL014)
	Image  *Image     // the memory image (required)
	ASID   ASID       // initial address space; the zero value matches AnyASID sections only
	// straightLimit bounds the instructions decoded without consuming
	// trace (0: 1<<24). Code that loops on direct jumps only (jmp .) never
	// needs the trace: libipt would decode it forever; iotap reports
	// FlowBadQuery instead.
	straightLimit uint32
}

// retStack is the return stack for compressed returns (64 entries, the
// oldest is dropped when full).
type retStack struct {
	top, bottom uint8
	stack       [retstackCap + 1]uint64
}

func (r *retStack) push(ip uint64) {
	r.stack[r.top] = ip
	if r.top == retstackCap {
		r.top = 0
	} else {
		r.top++
	}
	if r.bottom == r.top {
		if r.bottom == retstackCap {
			r.bottom = 0
		} else {
			r.bottom++
		}
	}
}

// peek returns the address a compressed return would pop (any value when
// the stack is empty).
func (r *retStack) peek() uint64 {
	return r.stack[(int(r.top)+retstackCap)%(retstackCap+1)]
}

func (r *retStack) pop() (uint64, int) {
	if r.top == r.bottom {
		return 0, eRetstackEmpty
	}
	if r.top == 0 {
		r.top = retstackCap
	} else {
		r.top--
	}
	return r.stack[r.top], 0
}

// BlockDecoder reconstructs the control flow of a trace as a sequence of
// blocks and events, with libipt's pt_blk_* semantics. Use SyncForward
// first, then Next and, whenever a status has StatusEventPending, Event.
type BlockDecoder struct {
	ev    evDecoder
	image *Image
	cfg   FlowConfig
	flags FlowFlags
	// condInBlock: FlowFlags.CondInBlock without TickEvents
	condInBlock bool

	event  Event // the next event (look-ahead)
	status int   // status of the event decoder
	asid   ASID
	rs     retStack
	pinsn  insn // postponed instruction

	ip, tsc          uint64
	lostMTC, lostCyc uint32
	cbr              uint8
	icnt             uint32
	mode             ExecMode
	enabled          bool
	speculative      bool
	hasTSC, hasCBR   bool
	hasICnt          bool
	processInsn      bool
	boundPaging      bool
	boundVMCS        bool
	boundPTW         bool
	boundIret        bool
	boundVMEntry     bool
	boundUIret       bool
	boundSwIntr      bool
	boundSyscall     bool

	sec  *Section // last section used
	noBC bool     // block cache disabled (for tests)
	// insnCache: keep a per-byte instruction cache in the sections (the
	// instruction decoder reads every instruction; the block decoder
	// mostly skips runs and decodes the few others from the bytes).
	insnCache bool
	tmp       insn // scratch instruction (kept here so that it does not escape per call)

	runOffs [maxRun]uint32 // scratch for fillChain
	policy  uint64         // block cache branch policy (followJumps, followCalls)

	straight, straightLimit uint32 // instructions since the last event (see FlowConfig)
}

// Status bits returned by Next, Event, SyncForward and Resync.
const (
	StatusIPSuppressed = stIPSuppressed // tracing is disabled: there is no current IP
	StatusEOS          = stEOS          // the trace ends after the pending events
	StatusEventPending = stEventPending // call Event before the next Next
)

// NewBlockDecoder returns a block decoder over trace.
func NewBlockDecoder(trace []byte, cfg FlowConfig) *BlockDecoder {
	d := &BlockDecoder{}
	d.init(trace, cfg)
	// Events that bind to an instruction (PTWRITE, MOV CR3, system
	// calls) walk to it one instruction at a time: cache what they decode.
	d.insnCache = true
	return d
}

func (d *BlockDecoder) init(trace []byte, cfg FlowConfig) {
	if cfg.Image == nil {
		cfg.Image = NewImage()
	}
	d.cfg = cfg
	d.flags = cfg.Flags
	d.condInBlock = cfg.Flags.CondInBlock && !cfg.Flags.TickEvents
	d.image = cfg.Image
	d.straightLimit = cfg.straightLimit
	d.policy = 0
	if !cfg.Flags.EndOnJump {
		d.policy |= followJumps
	}
	if !cfg.Flags.EndOnCall {
		d.policy |= followCalls
		if cfg.Flags.CallsInBlock {
			d.policy |= reportCalls
		}
	}
	if d.straightLimit == 0 {
		d.straightLimit = 1 << 24
	}
	d.ev.init(trace, cfg.Config, cfg.Flags.KeepTcalOnOVF, cfg.Flags.IFlagsEvents)
	d.reset()
}

func (d *BlockDecoder) reset() {
	d.tsc, d.lostMTC, d.lostCyc, d.cbr, d.icnt = 0, 0, 0, 0, 0
	d.mode = ModeUnknown
	d.ip = 0
	d.status = eNoSync
	d.enabled, d.speculative, d.hasTSC, d.hasCBR, d.hasICnt = false, false, false, false, false
	d.clearPostponed()
	d.event = Event{Type: EventType(0xff)}
	d.rs = retStack{}
	d.asid = d.cfg.ASID
}

func (d *BlockDecoder) stat(flags int) int {
	if !d.enabled {
		flags |= stIPSuppressed
	}
	if d.status == eEOS {
		flags |= stEOS
	}
	return flags
}

// err wraps a negative status into a *FlowError (io.EOF at the end).
func (d *BlockDecoder) err(st int, ip uint64) error {
	if st == eEOS {
		return io.EOF
	}
	return &FlowError{Code: FlowCode(-st), Offset: d.ev.offset(), IP: ip}
}

// Offset returns the trace offset of the packet being processed.
func (d *BlockDecoder) Offset() int64 { return d.ev.offset() }

// SyncOffset returns the offset of the last PSB.
func (d *BlockDecoder) SyncOffset() int64 { return d.ev.syncOffset() }

// IP returns the current IP (where the next block starts).
func (d *BlockDecoder) IP() uint64 { return d.ip }

// Time returns the TSC estimate at the current position; ok is false before
// the first TSC.
func (d *BlockDecoder) Time() (tsc uint64, lostMTC, lostCyc uint32, ok bool) {
	return d.tsc, d.lostMTC, d.lostCyc, d.hasTSC
}

// CBR returns the last core:bus ratio, if any.
func (d *BlockDecoder) CBR() (uint8, bool) { return d.cbr, d.hasCBR }

// ASID returns the current address space.
func (d *BlockDecoder) ASID() ASID { return d.asid }

func (d *BlockDecoder) fetchEvent() int {
	d.straight = 0
	ev := &d.event
	d.tsc, d.hasTSC, d.lostMTC, d.lostCyc = ev.TSC, ev.HasTSC, ev.LostMTC, ev.LostCyc
	if e := d.findTrigAnchor(ev); e < 0 {
		return e
	}
	if e := d.ev.next(ev); e < 0 {
		d.status = e
		*ev = Event{Type: EventType(0xff)}
		return 0
	}
	if ev.Type == EvTIP && !ev.IPSuppressed {
		// The decoder goes there at the next indirect branch: ask for its
		// block cache entry now (see skipRun).
		if s := d.sec; s != nil && s.blocks != nil {
			if o := ev.IP - s.Addr; o < uint64(len(s.blocks)) {
				prefetch2(&s.blocks[o], &s.blocks[o])
			}
		}
	}
	return 0
}

func (d *BlockDecoder) findTrigAnchor(ev *Event) int {
	switch ev.Type {
	case EvPaging, EvSIPI, EvCBR, EvMNT, EvStop, EvVMCS, EvMWait, EvPwrE, EvPwrX:
	case EvExecMode, EvTSX, EvAsyncPaging, EvAsyncVMCS, EvExStop, EvPTWrite, EvTick,
		EvIFlags, EvInterrupt, EvIret, EvSMI, EvRSM, EvInit, EvVMEntry, EvVMExit,
		EvShutdown, EvUIntr, EvUIret, EvTrig, EvSwIntr, EvSyscall:
		if !ev.IPSuppressed {
			d.hasICnt, d.icnt = true, 0
		}
	case EvEnabled, EvAsyncBranch, EvTIP, EvTNT:
		if ev.IPSuppressed {
			return eInternal
		}
		d.hasICnt, d.icnt = true, 0
	case EvDisabled, EvAsyncDisabled:
		d.hasICnt, d.icnt = false, 0
	case EvOverflow:
		d.hasICnt, d.icnt = !ev.IPSuppressed, 0
	}
	return 0
}

func (d *BlockDecoder) tick(ip uint64) int {
	if d.flags.TickEvents {
		ev := &d.event
		if ev.TSC != d.tsc {
			ev.Type = EvTick
			ev.IP = ip
			ev.IPSuppressed = false
			return 0
		}
	}
	return d.fetchEvent()
}

func (d *BlockDecoder) proceedIndirect() int {
	ev := &d.event
	switch ev.Type {
	case EvTIP:
		if ev.IPSuppressed {
			return eBadPacket
		}
		ip := d.ip
		d.ip = ev.IP
		return d.tick(ip)
	case EvTNT:
		save := d.ev
		tnt := *ev
		e := d.ev.next(ev)
		if e < 0 || ev.Type != EvTIP {
			d.ev = save
			*ev = tnt
			return eBadQuery
		}
		d.ip = ev.IP
		*ev = tnt
		return 0
	}
	return eBadQuery
}

func (d *BlockDecoder) condBranch() int {
	ev := &d.event
	if ev.Type != EvTNT {
		return eBadQuery
	}
	if ev.Size == 0 {
		return eInternal
	}
	ev.Size--
	return int(ev.Payload>>ev.Size) & 1
}

func (d *BlockDecoder) start() int {
	evd := d.ev
	var ev Event
	for evd.pkt.Offset() == d.ev.pkt.Offset() {
		if e := evd.next(&ev); e < 0 {
			if e != eEOS {
				return e
			}
			break
		}
		if !ev.StatusUpdate {
			break
		}
		if ev.Type == EvEnabled {
			d.enabled = true
			d.ip = ev.IP
			break
		}
	}
	d.status = d.ev.next(&d.event)
	return d.proceedTrailing(nil)
}

func (d *BlockDecoder) syncForward() int {
	d.reset()
	if e := d.ev.syncForward(); e < 0 {
		return e
	}
	return d.start()
}

func (d *BlockDecoder) syncSet(off int64) int {
	d.reset()
	if e := d.ev.syncSet(off); e < 0 {
		return e
	}
	return d.start()
}

// SyncForward synchronises on the next PSB. It returns the status bits,
// io.EOF when there is no further PSB, or a *FlowError.
func (d *BlockDecoder) SyncForward() (int, error) {
	st := d.syncForward()
	if st < 0 {
		return 0, d.err(st, d.ip)
	}
	return st, nil
}

// lookup returns the section holding ip.
func (d *BlockDecoder) lookup(ip uint64) *Section {
	// d.sec is dropped whenever the address space changes.
	if s := d.sec; s != nil && ip-s.Addr < uint64(len(s.Data)) {
		return s
	}
	s := d.image.find(ip, d.asid)
	if s != nil {
		d.sec = s
	}
	return s
}

// decodeInsn decodes the instruction at in.ip in in.mode.
func (d *BlockDecoder) decodeInsn(in *insn) int {
	s := d.lookup(in.ip)
	if s == nil {
		return eNoMap
	}
	in.isid = s.ID
	in.truncated = false
	off := in.ip - s.Addr
	if s.insns != nil {
		if e := s.insns[off]; e.size != 0 && e.mode == in.mode {
			in.insnEntry = e
			return 0
		}
	} else if d.insnCache {
		s.insns = make([]insnEntry, len(s.Data))
	}
	code := s.Data[off:]
	if len(code) > maxInsnSize {
		code = code[:maxInsnSize]
	}
	st := classify(code, in.mode, &in.insnEntry)
	if st < 0 {
		if len(code) == maxInsnSize {
			return st
		}
		// The instruction may continue in the next section.
		n := d.image.Read(in.raw[:], in.ip, d.asid)
		if n <= len(code) {
			return st
		}
		if st = classify(in.raw[:n], in.mode, &in.insnEntry); st < 0 {
			return st
		}
		if int(in.size) > len(code) {
			in.truncated = true
			return 0
		}
	}
	if s.insns != nil {
		s.insns[off] = in.insnEntry
	}
	return 0
}

func (d *BlockDecoder) proceedWithTrace(in *insn) int {
	switch in.class {
	case ClassCondJump:
		ip := in.ip + uint64(in.size)
		tnt := d.condBranch()
		if tnt != 0 {
			if tnt < 0 {
				return tnt
			}
			ip += uint64(int64(in.disp))
		}
		d.ip = ip
		return 0
	case ClassReturn:
		tnt := d.condBranch()
		if tnt <= 0 {
			if tnt == eBadQuery {
				break
			}
			if tnt == 0 {
				tnt = eBadRetcomp
			}
			return tnt
		}
		ip, e := d.rs.pop()
		if e < 0 {
			return e
		}
		d.ip = ip
		return 0
	case ClassJump:
		if in.kind == ikJmpAbs {
			break
		}
		if in.direct() {
			return eInternal
		}
	case ClassCall:
		if in.direct() {
			return eInternal
		}
	case ClassFarCall, ClassFarReturn, ClassFarJump:
	case ClassPTWrite, ClassOther:
		return eInternal
	case ClassUnknown:
		return eBadInsn
	}
	return d.proceedIndirect()
}

func (d *BlockDecoder) logCall(in *insn) {
	if in.class != ClassCall || (in.direct() && in.disp == 0) {
		return
	}
	d.rs.push(in.ip + uint64(in.size))
}

// proceedOneInsn decodes the instruction at d.ip and adds it to blk. It
// returns 1 when added, 0 when the block must end first, or an error.
func (d *BlockDecoder) proceedOneInsn(blk *Block, in *insn) int {
	if blk.NInsn >= defaultBlockLimit || blk.Truncated {
		return 0
	}
	if d.straight++; d.straight > d.straightLimit {
		return eBadQuery
	}
	in.mode = d.mode
	in.ip = d.ip
	if e := d.decodeInsn(in); e < 0 {
		return e
	}
	if in.isid != blk.ISID {
		if blk.NInsn != 0 {
			return 0
		}
		blk.ISID = in.isid
	}
	if in.truncated {
		blk.Raw = in.raw
		blk.Size = in.size
		blk.Truncated = true
	}
	d.logCall(in)
	blk.Class = in.class
	blk.EndIP = in.ip
	blk.EndSize, blk.EndDirect = in.size, in.direct() || in.kind == ikJmpAbs
	blk.NInsn++
	if d.hasICnt {
		d.icnt++
		if d.icnt == 0 {
			return eOverflow
		}
	}
	return 1
}

type insnPred func(*insn) bool

func predCR3(in *insn) bool     { return in.kind == ikMovCR3 }
func predPIP(in *insn) bool     { return in.binds2PIP() }
func predVMCS(in *insn) bool    { return in.binds2VMCS() }
func predPTW(in *insn) bool     { return in.class == ClassPTWrite }
func predIret(in *insn) bool    { return in.kind == ikIret }
func predVMEntry(in *insn) bool { return in.kind == ikVMEntry }
func predUIret(in *insn) bool   { return in.kind == ikUIret }
func predSwInt(in *insn) bool   { return in.kind == ikSwInt }
func predSyscall(in *insn) bool { return in.kind == ikSyscall }
func predSKL014(in *insn) bool {
	switch in.class {
	case ClassJump:
		if in.kind == ikJmpAbs {
			return false
		}
		return in.direct()
	case ClassCall:
		return in.direct()
	case ClassOther:
		return in.kind == ikMovCR3
	}
	return false
}

func (d *BlockDecoder) endsBlock(in *insn) bool {
	return ((d.flags.EndOnCall || d.flags.CallsInBlock) && in.class == ClassCall) || (d.flags.EndOnJump && in.class == ClassJump)
}

func (d *BlockDecoder) proceedToInsn(blk *Block, in *insn, pred insnPred) int {
	for {
		st := d.proceedOneInsn(blk, in)
		if st <= 0 {
			return st
		}
		if pred(in) {
			return 1
		}
		ip, e := in.nextIP()
		if e < 0 {
			return e
		}
		d.ip = ip
		if d.endsBlock(in) {
			return 0
		}
	}
}

func (d *BlockDecoder) proceedToIP(blk *Block, in *insn, ip uint64) int {
	for {
		if d.ip == ip {
			return 1
		}
		st := d.proceedOneInsn(blk, in)
		if st <= 0 {
			return st
		}
		next, e := in.nextIP()
		if e < 0 {
			return e
		}
		d.ip = next
		if d.endsBlock(in) {
			if d.ip == ip {
				return 1
			}
			return 0
		}
	}
}

func (d *BlockDecoder) proceedSKL014(blk *Block, in *insn) int {
	var st int
	for {
		st = d.proceedToInsn(blk, in, predSKL014)
		if st <= 0 {
			break
		}
		if in.kind == ikMovCR3 {
			break
		}
		ip, e := in.nextIP()
		if e < 0 {
			st = e
			break
		}
		if d.cfg.Filter.check(ip) == 0 {
			st = 1
			break
		}
		d.ip = ip
		if d.endsBlock(in) {
			break
		}
	}
	return st
}

func (d *BlockDecoder) proceedToDisabled(blk *Block, in *insn, ev *Event) int {
	if ev.IPSuppressed {
		if d.cfg.Filter.Cfg != 0 && d.cfg.Errata.SKL014 {
			return d.proceedSKL014(blk, in)
		}
		return d.proceedToInsn(blk, in, predCR3)
	}
	return d.proceedToIP(blk, in, ev.IP)
}

func (d *BlockDecoder) setDisableResumeIP(in *insn) {
	switch in.class {
	case ClassCall, ClassFarCall:
		d.ip = in.ip + uint64(in.size)
	default:
		d.ip = 0
	}
}

// proceedToBound proceeds to the instruction an event binds to: the one
// matching pred when the event has no IP, else the one at the event's IP.
func (d *BlockDecoder) proceedToBound(blk *Block, in *insn, ev *Event, pred insnPred, includeAtIP bool) int {
	if ev.IPSuppressed {
		return d.proceedToInsn(blk, in, pred)
	}
	st := d.proceedToIP(blk, in, ev.IP)
	if st <= 0 || !includeAtIP {
		return st
	}
	return d.proceedOneInsn(blk, in)
}

func (d *BlockDecoder) provideTrigAnchor(ev *Event) int {
	if ev.Type != EvTrig || ev.IPSuppressed {
		return eInternal
	}
	if ev.IP != 0 {
		return 0
	}
	if !d.hasICnt || uint32(ev.ICnt) < d.icnt {
		return eBadPacket
	}
	ev.ICnt -= uint16(d.icnt)
	ev.IP = d.ip
	return 0
}

func (d *BlockDecoder) proceedToTrig(blk *Block, in *insn, ev *Event) int {
	if ev.IPSuppressed {
		return 1
	}
	if e := d.provideTrigAnchor(ev); e < 0 {
		return e
	}
	if !d.enabled {
		if ev.ICnt == 0 {
			return eInternal
		}
		return 1
	}
	st := d.proceedToIP(blk, in, ev.IP)
	if st <= 0 {
		return st
	}
	for ev.ICnt != 0 {
		st = d.proceedOneInsn(blk, in)
		if st <= 0 {
			return st
		}
		ip, e := in.nextIP()
		if e < 0 {
			return e
		}
		d.ip = ip
		ev.IP = ip
		ev.ICnt--
	}
	return 1
}

func (d *BlockDecoder) handleSKD022(ev *Event) int {
	in := insn{ip: ev.At}
	in.mode = d.mode
	if d.decodeInsn(&in) < 0 {
		return 0
	}
	if in.kind != ikVMEntry {
		return 0
	}
	ev.Type = EvDisabled
	return 1
}

func (d *BlockDecoder) postponeInsn(in *insn) int {
	if d.processInsn {
		return eInternal
	}
	d.processInsn = true
	d.pinsn = *in
	return d.stat(stEventPending)
}

func (d *BlockDecoder) clearPostponed() {
	d.processInsn = false
	d.boundPaging, d.boundVMCS, d.boundPTW, d.boundIret = false, false, false, false
	d.boundVMEntry, d.boundUIret, d.boundSwIntr, d.boundSyscall = false, false, false, false
}

func (d *BlockDecoder) proceedPostponed() int {
	if !d.processInsn {
		return 0
	}
	if !d.enabled {
		d.clearPostponed()
		return 0
	}
	ip, e := d.pinsn.nextIP()
	if e < 0 {
		if e != eBadQuery {
			return e
		}
		if e = d.proceedWithTrace(&d.pinsn); e < 0 {
			return e
		}
	} else {
		d.ip = ip
	}
	d.clearPostponed()
	return 0
}

// proceedEvent proceeds to the location of the pending event.
func (d *BlockDecoder) proceedEvent(blk *Block) int {
	in := &d.tmp
	ev := &d.event
	st := 0
	switch ev.Type {
	case EvDisabled:
		if ev.StatusUpdate {
			break
		}
		st = d.proceedToDisabled(blk, in, ev)
		if st <= 0 {
			if st != eBadQuery {
				return st
			}
			d.setDisableResumeIP(in)
		}
	case EvAsyncDisabled:
		st = d.proceedToIP(blk, in, ev.At)
		if st <= 0 {
			return st
		}
		if d.cfg.Errata.SKD022 && d.handleSKD022(ev) != 0 {
			return d.proceedEvent(blk)
		}
	case EvAsyncBranch:
		if st = d.proceedToIP(blk, in, ev.At); st <= 0 {
			return st
		}
	case EvPaging, EvVMCS:
		if !d.enabled {
			break
		}
		pred := predPIP
		if ev.Type == EvVMCS {
			pred = predVMCS
		}
		if st = d.proceedToInsn(blk, in, pred); st <= 0 {
			return st
		}
		if ev.Type == EvPaging {
			d.boundPaging = true
		} else {
			d.boundVMCS = true
		}
		return d.postponeInsn(in)
	case EvAsyncPaging, EvAsyncVMCS, EvExecMode, EvTSX, EvIFlags, EvInterrupt,
		EvSMI, EvInit, EvVMExit, EvShutdown, EvUIntr:
		if ev.IPSuppressed {
			break
		}
		if st = d.proceedToIP(blk, in, ev.IP); st <= 0 {
			return st
		}
	case EvExStop, EvMWait:
		if !d.enabled || ev.IPSuppressed {
			break
		}
		if st = d.proceedToIP(blk, in, ev.IP); st <= 0 {
			return st
		}
	case EvPTWrite, EvIret, EvVMEntry, EvUIret, EvSwIntr, EvSyscall:
		if !d.enabled {
			break
		}
		var pred insnPred
		var flag *bool
		include := true
		switch ev.Type {
		case EvPTWrite:
			pred, flag = predPTW, &d.boundPTW
		case EvIret:
			pred, flag = predIret, &d.boundIret
		case EvVMEntry:
			pred, flag = predVMEntry, &d.boundVMEntry
		case EvUIret:
			pred, flag = predUIret, &d.boundUIret
		case EvSwIntr:
			pred, flag, include = predSwInt, &d.boundSwIntr, false
		case EvSyscall:
			pred, flag, include = predSyscall, &d.boundSyscall, false
		}
		if st = d.proceedToBound(blk, in, ev, pred, include); st <= 0 {
			return st
		}
		*flag = true
		return d.postponeInsn(in)
	case EvTrig:
		if st = d.proceedToTrig(blk, in, ev); st <= 0 {
			return st
		}
	case EvTIP, EvTNT:
		return eInternal
	}
	return d.stat(stEventPending)
}

// proceedNoEvent proceeds until the next instruction that needs the trace.
func (d *BlockDecoder) proceedNoEvent(blk *Block) int {
	in := &d.tmp
	for {
		var st int
		if !d.noBC {
			// The block cache gives the chain of fall-through
			// instructions and direct branches in one step, and the
			// instruction after it.
			s, ok, end := d.skipRun(blk, in)
			if end {
				return 0
			}
			if ok && blk.NInsn < defaultBlockLimit {
				if d.straight++; d.straight > d.straightLimit {
					return eBadQuery
				}
				in.ip, in.isid, in.truncated = d.ip, s.ID, false
				blk.ISID = s.ID
				d.logCall(in)
				blk.Class = in.class
				blk.EndIP = in.ip
				blk.EndSize, blk.EndDirect = in.size, in.direct() || in.kind == ikJmpAbs
				blk.NInsn++
				st = 1
				if d.hasICnt {
					d.icnt++
					if d.icnt == 0 {
						return eOverflow
					}
				}
			}
		}
		if st == 0 {
			if st = d.proceedOneInsn(blk, in); st <= 0 {
				return st
			}
		}
		ip, e := in.nextIP()
		if e < 0 {
			if e != eBadQuery {
				return e
			}
			st = d.proceedWithTrace(in)
			if st != 0 || !d.condInBlock || in.class != ClassCondJump || d.event.Type != EvTNT || d.event.Size == 0 || d.processInsn {
				return st
			}
			continue
		}
		d.ip = ip
		if d.endsBlock(in) {
			return 0
		}
	}
}

func (d *BlockDecoder) proceed(blk *Block) int {
	st := d.status
	if st < 0 {
		if st != eEOS {
			return st
		}
		if !d.enabled {
			return eEOS
		}
		if st = d.proceedNoEvent(blk); st < 0 {
			return st
		}
		return stEOS
	}
	switch d.event.Type {
	case EvTNT, EvTIP:
		if !d.enabled {
			return eNoEnable
		}
		if st = d.proceedNoEvent(blk); st < 0 {
			return st
		}
		return d.proceedTrailing(blk)
	}
	return d.proceedEvent(blk)
}

func (d *BlockDecoder) rangeIsContiguous(begin, end uint64) int {
	in := insn{ip: begin}
	for steps := 0; in.ip != end; steps++ {
		if steps >= bdm64MaxSteps {
			return 0
		}
		in.mode = d.mode
		if e := d.decodeInsn(&in); e < 0 {
			return e
		}
		ip, e := in.nextIP()
		if e < 0 {
			return e
		}
		in.ip = ip
	}
	return 1
}

func (d *BlockDecoder) handleBDM64(blk *Block, ev *Event) int {
	if !ev.Aborted || blk.NInsn == 0 {
		return 0
	}
	in := insn{ip: blk.EndIP}
	in.mode = blk.Mode
	if d.decodeInsn(&in) < 0 {
		return 0
	}
	if !in.isBranch() {
		return 0
	}
	if st := d.rangeIsContiguous(d.ip, ev.IP); st > 0 {
		return st
	}
	d.ip = ev.IP
	return 1
}

func (d *BlockDecoder) postponeTrailingTSX(blk *Block, ev *Event) int {
	if ev.IPSuppressed {
		return 0
	}
	if blk != nil && d.cfg.Errata.BDM64 {
		if d.handleBDM64(blk, ev) < 0 {
			return 1
		}
	}
	if d.ip != ev.IP {
		return 1
	}
	return 0
}

// proceedTrailing checks whether the next event binds to the current
// position and reports it as pending.
func (d *BlockDecoder) proceedTrailing(blk *Block) int {
	if st := d.status; st < 0 {
		if e := d.proceedPostponed(); e < 0 {
			return e
		}
		flags := 0
		if st != eEOS {
			flags |= stEventPending
		}
		return d.stat(flags)
	}
	ev := &d.event
	pp := func() int { return d.proceedPostponed() }
	switch ev.Type {
	case EvTNT:
		if !d.flags.TickEvents || blk == nil || !ev.HasTSC || ev.TSC == d.tsc {
			if ev.Size != 0 {
				break
			}
			if e := d.fetchEvent(); e < 0 {
				return e
			}
			return d.proceedTrailing(blk)
		}
		if blk.Class != ClassCondJump && blk.Class != ClassReturn {
			break
		}
		return d.stat(stEventPending)
	case EvTIP:
	case EvTick, EvEnabled, EvOverflow, EvStop, EvPwrE, EvPwrX, EvCBR, EvMNT:
		if e := pp(); e < 0 {
			return e
		}
		return d.stat(stEventPending)
	case EvDisabled:
		if !d.processInsn {
			if ev.StatusUpdate {
				return d.stat(stEventPending)
			}
			break
		}
		if ev.IPSuppressed && d.pinsn.kind == ikMovCR3 {
			return d.stat(stEventPending)
		}
		ip, e := d.pinsn.nextIP()
		if e < 0 {
			if e != eBadQuery {
				return e
			}
			d.setDisableResumeIP(&d.pinsn)
			return d.stat(stEventPending)
		}
		d.ip = ip
		d.clearPostponed()
		if !ev.IPSuppressed && d.ip == ev.IP {
			return d.stat(stEventPending)
		}
	case EvAsyncDisabled:
		if e := pp(); e < 0 {
			return e
		}
		if d.ip != ev.At {
			break
		}
		if d.cfg.Errata.SKD022 && d.handleSKD022(ev) != 0 {
			break
		}
		return d.stat(stEventPending)
	case EvAsyncBranch:
		if e := pp(); e < 0 {
			return e
		}
		if d.ip != ev.At {
			break
		}
		return d.stat(stEventPending)
	case EvPaging, EvVMCS:
		if !d.enabled {
			return d.stat(stEventPending)
		}
		bound, pred := &d.boundPaging, predPIP
		if ev.Type == EvVMCS {
			bound, pred = &d.boundVMCS, predVMCS
		}
		if !d.processInsn || *bound || !pred(&d.pinsn) {
			break
		}
		*bound = true
		return d.stat(stEventPending)
	case EvAsyncPaging, EvAsyncVMCS:
		if e := pp(); e < 0 {
			return e
		}
		if !ev.IPSuppressed && d.ip != ev.IP {
			break
		}
		return d.stat(stEventPending)
	case EvExecMode:
		if e := pp(); e < 0 {
			return e
		}
		if !d.enabled {
			return d.stat(stEventPending)
		}
		if !ev.IPSuppressed && d.ip != ev.IP {
			break
		}
		return d.stat(stEventPending)
	case EvTSX:
		if e := pp(); e < 0 {
			return e
		}
		if st := d.postponeTrailingTSX(blk, ev); st != 0 {
			if st < 0 {
				return st
			}
			break
		}
		return d.stat(stEventPending)
	case EvExStop, EvMWait:
		if e := pp(); e < 0 {
			return e
		}
		if !ev.IPSuppressed && d.enabled && d.ip != ev.IP {
			break
		}
		return d.stat(stEventPending)
	case EvIFlags, EvInterrupt, EvSMI, EvInit, EvVMExit, EvShutdown, EvUIntr:
		if e := pp(); e < 0 {
			return e
		}
		if d.enabled && !ev.IPSuppressed && d.ip != ev.IP {
			break
		}
		return d.stat(stEventPending)
	case EvPTWrite, EvIret, EvVMEntry, EvUIret, EvSwIntr, EvSyscall:
		if !d.enabled {
			return d.stat(stEventPending)
		}
		var bound *bool
		var pred insnPred
		switch ev.Type {
		case EvPTWrite:
			bound, pred = &d.boundPTW, predPTW
		case EvIret:
			bound, pred = &d.boundIret, predIret
		case EvVMEntry:
			bound, pred = &d.boundVMEntry, predVMEntry
		case EvUIret:
			bound, pred = &d.boundUIret, predUIret
		case EvSwIntr:
			bound, pred = &d.boundSwIntr, predSwInt
		case EvSyscall:
			bound, pred = &d.boundSyscall, predSyscall
		}
		if !d.processInsn || *bound {
			break
		}
		if !ev.IPSuppressed || !pred(&d.pinsn) {
			break
		}
		*bound = true
		return d.stat(stEventPending)
	case EvRSM, EvSIPI:
		if e := pp(); e < 0 {
			return e
		}
		if !ev.IPSuppressed {
			return eInternal
		}
		return d.stat(stEventPending)
	case EvTrig:
		if e := pp(); e < 0 {
			return e
		}
		if !d.enabled || ev.IPSuppressed {
			return d.stat(stEventPending)
		}
		if e := d.provideTrigAnchor(ev); e < 0 {
			return e
		}
		if ev.ICnt != 0 {
			break
		}
		if ev.IP != d.ip {
			return eBadPacket
		}
		return d.stat(stEventPending)
	}
	if e := d.proceedPostponed(); e < 0 {
		return e
	}
	return d.stat(0)
}

// next decodes the next block; it returns status bits or a negative error.
func (d *BlockDecoder) next(blk *Block) int {
	*blk = Block{IP: d.ip, Mode: d.mode, Speculative: d.speculative}
	return d.proceed(blk)
}

// Next decodes the next block into blk. It returns the status bits; when
// they include StatusEventPending, call Event before calling Next again. At
// the end of the trace it returns io.EOF. A *FlowError reports a decoding
// error: blk holds the instructions decoded before it; call Resync or
// SyncForward to go on.
func (d *BlockDecoder) Next(blk *Block) (int, error) {
	st := d.next(blk)
	if st < 0 {
		ip := blk.IP
		if blk.NInsn != 0 {
			ip = blk.EndIP
		}
		return 0, d.err(st, ip)
	}
	return st, nil
}

func (d *BlockDecoder) processEnabled(ev *Event) int {
	if ev.StatusUpdate {
		if !d.enabled {
			return eBadStatusUpdate
		}
		return 0
	}
	if ev.IPSuppressed {
		return eNoIP
	}
	if d.enabled {
		return eBadContext
	}
	d.ip = ev.IP
	d.enabled = true
	return 0
}

func (d *BlockDecoder) processDisabled(ev *Event) int {
	if ev.StatusUpdate {
		if d.enabled {
			return eBadStatusUpdate
		}
		return 0
	}
	if !d.enabled {
		return eBadContext
	}
	d.enabled = false
	d.icnt = 0
	return 0
}

func (d *BlockDecoder) setCR3(cr3 uint64) {
	if d.asid.CR3 != cr3 {
		d.asid.CR3 = cr3
		d.sec = nil
	}
}

func (d *BlockDecoder) setVMCS(base uint64) {
	if d.asid.VMCS != base {
		d.asid.VMCS = base
		d.sec = nil
	}
}

// event reports the pending event into *out.
func (d *BlockDecoder) eventNext(out *Event) int {
	if d.status < 0 {
		return d.status
	}
	ev := &d.event
	chk := func(ip uint64) bool { return d.enabled && !ev.IPSuppressed && d.ip != ip }
	switch ev.Type {
	case EvTNT:
		if !d.flags.TickEvents || !ev.HasTSC || ev.TSC == d.tsc {
			return eBadQuery
		}
		*out = Event{Type: EvTick, HasTSC: true, TSC: ev.TSC, LostMTC: ev.LostMTC, LostCyc: ev.LostCyc, IP: d.ip}
		d.hasTSC, d.tsc, d.lostMTC, d.lostCyc = true, ev.TSC, ev.LostMTC, ev.LostCyc
		if ev.Size == 0 {
			if e := d.fetchEvent(); e < 0 {
				return e
			}
		}
		return d.proceedTrailing(nil)
	case EvEnabled:
		if ev.IP == d.ip {
			ev.Resumed = true
		}
		if e := d.processEnabled(ev); e < 0 {
			return e
		}
	case EvAsyncDisabled, EvDisabled:
		if ev.Type == EvAsyncDisabled && d.ip != ev.At {
			return eBadQuery
		}
		if e := d.processDisabled(ev); e < 0 {
			return e
		}
	case EvAsyncBranch:
		if d.ip != ev.At {
			return eBadQuery
		}
		if ev.StatusUpdate || !d.enabled {
			return eBadContext
		}
		d.ip = ev.IP
	case EvAsyncPaging, EvPaging:
		if ev.Type == EvAsyncPaging && !ev.IPSuppressed && d.ip != ev.IP {
			return eBadQuery
		}
		d.setCR3(ev.CR3)
	case EvAsyncVMCS, EvVMCS:
		if ev.Type == EvAsyncVMCS && !ev.IPSuppressed && d.ip != ev.IP {
			return eBadQuery
		}
		d.setVMCS(ev.Base)
	case EvOverflow:
		if ev.StatusUpdate {
			return eBadContext
		}
		if ev.IPSuppressed {
			d.enabled, d.ip = false, 0
		} else {
			d.enabled, d.ip = true, ev.IP
		}
		d.speculative = false
	case EvExecMode:
		if chk(ev.IP) {
			return eBadQuery
		}
		if ev.StatusUpdate && d.enabled && d.mode != ModeUnknown && d.mode != ev.Mode {
			return eBadStatusUpdate
		}
		d.mode = ev.Mode
	case EvTSX:
		if !ev.IPSuppressed && d.ip != ev.IP {
			return eBadQuery
		}
		d.speculative = ev.Speculative
	case EvStop:
		if ev.StatusUpdate || d.enabled {
			return eBadContext
		}
	case EvExStop, EvMWait, EvIFlags, EvInterrupt, EvSMI, EvInit, EvVMExit,
		EvShutdown, EvUIntr, EvTrig, EvSwIntr, EvSyscall:
		if chk(ev.IP) {
			return eBadQuery
		}
	case EvCBR:
		d.hasCBR, d.cbr = true, ev.Ratio
	case EvTIP:
		return eBadQuery
	case EvRSM, EvSIPI:
		if !ev.IPSuppressed {
			return eInternal
		}
	}
	*out = *ev
	if e := d.fetchEvent(); e < 0 {
		return e
	}
	return d.proceedTrailing(nil)
}

// Event returns the pending event and the new status bits.
func (d *BlockDecoder) Event(ev *Event) (int, error) {
	st := d.eventNext(ev)
	if st < 0 {
		return 0, d.err(st, d.ip)
	}
	return st, nil
}

func (d *BlockDecoder) resyncAtEvent() int {
	if e := d.fetchEvent(); e < 0 {
		return e
	}
	return d.proceedTrailing(nil)
}

// resync goes on after an error at the next event that tells where the
// flow is, or at the last PSB (libipt's pt_blk_resync).
func (d *BlockDecoder) resync() int {
	d.clearPostponed()
	ev := &d.event
	for {
		if d.status < 0 {
			return d.status
		}
		if ev.StatusUpdate {
			return d.syncSet(d.ev.syncOffset())
		}
		switch ev.Type {
		case EvEnabled:
			d.enabled = false
			return d.stat(stEventPending)
		case EvDisabled:
			d.enabled, d.ip = true, 0
			if e := d.processDisabled(ev); e < 0 {
				return e
			}
			return d.resyncAtEvent()
		case EvAsyncDisabled:
			d.ip = ev.At
			if d.cfg.Errata.SKD022 && d.handleSKD022(ev) != 0 {
				break
			}
			return d.stat(stEventPending)
		case EvAsyncBranch:
			d.ip = ev.At
			return d.stat(stEventPending)
		case EvAsyncPaging, EvPaging:
			if ev.Type == EvAsyncPaging && !ev.IPSuppressed {
				d.ip = ev.IP
				return d.stat(stEventPending)
			}
			d.setCR3(ev.CR3)
		case EvOverflow:
			return d.stat(stEventPending)
		case EvExecMode, EvTSX, EvIFlags, EvInterrupt:
			if ev.IPSuppressed {
				d.enabled = false
			} else {
				d.enabled, d.ip = true, ev.IP
			}
			return d.stat(stEventPending)
		case EvAsyncVMCS, EvVMCS:
			if ev.Type == EvAsyncVMCS && !ev.IPSuppressed {
				d.ip = ev.IP
				return d.stat(stEventPending)
			}
			d.setVMCS(ev.Base)
		case EvExStop, EvMWait, EvTick, EvIret, EvSMI, EvRSM, EvInit, EvVMExit,
			EvShutdown, EvUIntr, EvSwIntr, EvSyscall:
			if ev.IPSuppressed {
				break
			}
			d.ip = ev.IP
			return d.stat(stEventPending)
		case EvPTWrite:
			if ev.IPSuppressed {
				return eEventIgnored
			}
			d.ip = ev.IP
			return d.stat(0)
		case EvVMEntry, EvUIret:
			if ev.IPSuppressed {
				break
			}
			d.ip = ev.IP
			return d.stat(0)
		case EvTIP:
			d.ip = ev.IP
			return d.resyncAtEvent()
		}
		if e := d.fetchEvent(); e < 0 {
			return e
		}
	}
}

// Resync goes on after a decoding error: at the next event that tells
// where the flow is, or by synchronising again at the last PSB. A
// *FlowError with Code FlowEventIgnored means an event must be read with
// Event first.
func (d *BlockDecoder) Resync() (int, error) {
	st := d.resync()
	if st < 0 {
		return 0, d.err(st, d.ip)
	}
	return st, nil
}
