package intelpt

import (
	"errors"
	"io"
)

// EventType is the kind of a flow Event.
type EventType uint8

// Event types (libipt's enum pt_event_type, same meaning).
const (
	EvNone          EventType = iota
	EvEnabled                 // tracing enabled (TIP.PGE or PSB+ with an IP); IP, Resumed
	EvDisabled                // tracing disabled (TIP.PGD) at a branch; IP (target) unless IPSuppressed
	EvAsyncDisabled           // tracing disabled asynchronously at At; IP unless IPSuppressed
	EvAsyncBranch             // interrupt/exception from At (from) to IP (to)
	EvPaging                  // CR3 change bound to an instruction; CR3, NonRoot
	EvAsyncPaging             // CR3 change at IP; CR3, NonRoot
	EvOverflow                // internal buffer overflow; decoding resumes at IP unless IPSuppressed
	EvExecMode                // execution mode change; Mode, IP
	EvTSX                     // transaction state; Speculative, Aborted, IP
	EvStop                    // tracing stopped (TraceStop)
	EvVMCS                    // VMCS base change bound to an instruction; Base
	EvAsyncVMCS               // VMCS base change at IP; Base
	EvExStop                  // execution stopped; IP
	EvMWait                   // MWAIT; Hints, Ext, IP
	EvPwrE                    // power state entry; State, SubState, HW
	EvPwrX                    // power state exit; Last, Deepest, Interrupt, Store, Autonomous
	EvPTWrite                 // PTWRITE; Payload, Size, IP
	EvTick                    // the time moved at IP (only when asked for)
	EvCBR                     // core:bus ratio; Ratio
	EvMNT                     // maintenance; Payload
	EvTIP                     // (internal) a TIP target
	EvTNT                     // (internal) TNT bits
	EvIFlags                  // RFLAGS.IF changed; IFlag, IP
	EvInterrupt               // event trace: interrupt; Vector, CR2, IP
	EvIret                    // event trace: iret
	EvSMI                     // event trace: SMI
	EvRSM                     // event trace: RSM
	EvSIPI                    // event trace: SIPI; Vector
	EvInit                    // event trace: INIT
	EvVMEntry                 // event trace: VM entry
	EvVMExit                  // event trace: VM exit; Vector, VMXR, VMXQ
	EvShutdown                // event trace: shutdown
	EvUIntr                   // event trace: user interrupt; Vector
	EvUIret                   // event trace: UIRET
	EvTrig                    // trigger; TRBV, Mult, ICnt, IP
	EvSwIntr                  // event trace: software interrupt; Vector
	EvSyscall                 // event trace: syscall
	evIgnore                  // internal: a MODE.Exec that changed nothing
	numEventTypes
)

var eventTypeNames = [numEventTypes]string{
	"none", "enabled", "disabled", "async-disabled", "async-branch", "paging",
	"async-paging", "overflow", "exec-mode", "tsx", "stop", "vmcs", "async-vmcs",
	"exstop", "mwait", "pwre", "pwrx", "ptwrite", "tick", "cbr", "mnt", "tip",
	"tnt", "iflags", "interrupt", "iret", "smi", "rsm", "sipi", "init",
	"vmentry", "vmexit", "shutdown", "uintr", "uiret", "trig", "swintr",
	"syscall", "ignore",
}

// String returns a short name ("enabled", "async-branch", ...).
func (t EventType) String() string {
	if t < numEventTypes {
		return eventTypeNames[t]
	}
	return "unknown"
}

// ExecMode is the execution mode (code size) of traced code.
type ExecMode uint8

// Execution modes.
const (
	ModeUnknown ExecMode = iota
	Mode16
	Mode32
	Mode64
)

func (m ExecMode) String() string {
	switch m {
	case Mode16:
		return "16-bit"
	case Mode32:
		return "32-bit"
	case Mode64:
		return "64-bit"
	}
	return "<unknown>"
}

func execModeOf(csl, csd bool) ExecMode {
	switch {
	case csl && csd:
		return ModeUnknown
	case csl:
		return Mode64
	case csd:
		return Mode32
	}
	return Mode16
}

// Event is one event of the flow decoders. It is a flat value; which
// fields are meaningful depends on Type (see the EventType constants).
type Event struct {
	Type         EventType
	IPSuppressed bool // the event has no IP
	StatusUpdate bool // a PSB+ status update, not a change
	HasTSC       bool // TSC is valid
	Resumed      bool // EvEnabled: tracing resumed where it was disabled
	Speculative  bool // EvTSX: in a transaction
	Aborted      bool // EvTSX: transaction aborted
	NonRoot      bool // EvPaging, EvAsyncPaging: VMX non-root
	HW           bool // EvPwrE
	Interrupt    bool // EvPwrX wake reasons
	Store        bool
	Autonomous   bool
	IFlag        bool // EvIFlags
	HasCR2       bool // EvInterrupt
	HasVector    bool // EvVMExit
	HasVMXR      bool // EvVMExit
	HasVMXQ      bool // EvVMExit
	Mult         bool // EvTrig
	Mode         ExecMode
	State, Sub   uint8 // EvPwrE: C-state and sub-state; EvPwrX: last and deepest C-state
	Size         uint8 // EvPTWrite payload size; EvTNT bit count (internal)
	TRBV         uint8 // EvTrig
	Vector       uint8
	Ratio        uint8  // EvCBR
	ICnt         uint16 // EvTrig
	Hints, Ext   uint32 // EvMWait
	LostMTC      uint32
	LostCyc      uint32
	TSC          uint64
	IP           uint64 // the event's IP (for EvAsyncBranch the target)
	At           uint64 // EvAsyncBranch: source; EvAsyncDisabled: where tracing stopped
	CR3          uint64 // EvPaging, EvAsyncPaging
	Base         uint64 // EvVMCS, EvAsyncVMCS
	Payload      uint64 // EvPTWrite, EvMNT; EvTNT bits (internal)
	CR2          uint64
	VMXR, VMXQ   uint64
}

// Status codes of the flow decoders. They are libipt's error codes (negated
// pt_error_code values), so that messages read the same as ptxed's.
const (
	eInternal         = -1
	eInvalid          = -2
	eNoSync           = -3
	eBadOpc           = -4
	eBadPacket        = -5
	eBadContext       = -6
	eEOS              = -7
	eBadQuery         = -8
	eNoMem            = -9
	eBadConfig        = -10
	eNoIP             = -11
	eIPSuppressed     = -12
	eNoMap            = -13
	eBadInsn          = -14
	eNoTime           = -15
	eNoCBR            = -16
	eBadImage         = -17
	eBadLock          = -18
	eNotSupported     = -19
	eRetstackEmpty    = -20
	eBadRetcomp       = -21
	eBadStatusUpdate  = -22
	eNoEnable         = -23
	eEventIgnored     = -24
	eOverflow         = -25
	eBadFile          = -26
	eBadCPU           = -27
	numErrCodes       = 28
	stIPSuppressed    = 1 << 0
	stEOS             = 1 << 1
	stEventPending    = 1 << 2
	evbPSBEnd         = 1 << 0
	evbTIP            = 1 << 1
	evbFUP            = 1 << 2
	evbFUPBound       = 1 << 3
	evbExStop         = 1 << 4
	evbCFE            = 1 << 5
	evbPwrX           = 1 << 6
	evqMax            = 14
	retstackCap       = 64
	maxInsnSize       = 15
	bdm64MaxSteps     = 0x100
	addrCfgFilter     = 1
	addrCfgStop       = 2
	numAddrFilters    = 4
	defaultBlockLimit = 0xffff
)

var errText = [numErrCodes]string{
	"OK", "internal error", "invalid argument", "decoder out of sync",
	"unknown opcode", "unknown packet", "unexpected packet context",
	"reached end of trace stream", "trace stream does not match query",
	"out of memory", "bad configuration", "no ip", "ip has been suppressed",
	"no memory mapped at this address", "unknown instruction",
	"no timing information", "no core:bus ratio", "bad image", "locking error",
	"not supported", "compressed return without call", "bad compressed return",
	"bad status update", "expected tracing enabled event", "event ignored",
	"overflow", "bad file", "unknown cpu",
}

// FlowCode is a flow decoding error code; its text is libipt's
// pt_errstr for the same condition.
type FlowCode int

// Flow error codes that callers may want to test for.
const (
	FlowInternal      FlowCode = -eInternal
	FlowNoSync        FlowCode = -eNoSync
	FlowBadOpcode     FlowCode = -eBadOpc
	FlowBadPacket     FlowCode = -eBadPacket
	FlowBadContext    FlowCode = -eBadContext
	FlowEOS           FlowCode = -eEOS
	FlowBadQuery      FlowCode = -eBadQuery
	FlowNoMap         FlowCode = -eNoMap
	FlowBadInsn       FlowCode = -eBadInsn
	FlowRetstackEmpty FlowCode = -eRetstackEmpty
	FlowBadRetcomp    FlowCode = -eBadRetcomp
	FlowBadStatus     FlowCode = -eBadStatusUpdate
	FlowNoEnable      FlowCode = -eNoEnable
	FlowEventIgnored  FlowCode = -eEventIgnored
	FlowOverflow      FlowCode = -eOverflow
)

func (c FlowCode) String() string {
	if c >= 0 && int(c) < numErrCodes {
		return errText[c]
	}
	return "internal error."
}

// FlowError is an error of the instruction and block decoders: what went
// wrong, at which trace offset (the packet being processed) and at which IP.
type FlowError struct {
	Code   FlowCode
	Offset int64
	IP     uint64
}

func (e *FlowError) Error() string {
	return "intelpt: offset " + hexStr(uint64(e.Offset)) + ", ip " + hexStr(e.IP) + ": " + e.Code.String()
}

func hexStr(v uint64) string {
	const digits = "0123456789abcdef"
	var b [18]byte
	i := len(b)
	for {
		i--
		b[i] = digits[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	i--
	b[i] = 'x'
	i--
	b[i] = '0'
	return string(b[i:])
}

// errStr returns libipt's text for a negative status.
func errStr(code int) string { return FlowCode(-code).String() }

type evqEntry struct {
	ev   Event
	bind uint8
}

// evQueue holds events waiting for the packet they bind to, oldest first.
type evQueue struct {
	n int
	q [evqMax]evqEntry
}

func (q *evQueue) enqueue(b uint8) *Event {
	if q.n >= evqMax {
		return nil
	}
	e := &q.q[q.n]
	q.n++
	*e = evqEntry{bind: b}
	return &e.ev
}

func (q *evQueue) find(b uint8, t EventType) int {
	for i := 0; i < q.n; i++ {
		if q.q[i].bind&b != 0 && q.q[i].ev.Type == t {
			return i
		}
	}
	return -1
}

func (q *evQueue) peek(b uint8) int {
	for i := 0; i < q.n; i++ {
		if q.q[i].bind&b != 0 {
			return i
		}
	}
	return -1
}

func (q *evQueue) pending(b uint8) bool { return q.peek(b) >= 0 }

func (q *evQueue) remove(i int) Event {
	ev := q.q[i].ev
	copy(q.q[i:q.n], q.q[i+1:q.n])
	q.n--
	return ev
}

// evDecoder turns packets into events, binding each to the packet that
// tells where in the flow it happened (libipt's event decoder).
type evDecoder struct {
	cfg    Config
	pkt    Decoder
	packet Packet
	pktOff int64 // offset of packet
	status int   // stored packet decoder error (0 or negative)

	ev     Event
	haveEv bool

	enabled, bound, modeExecValid bool
	iflag, csd, csl               bool
	keepTcal, iflagsEvents        bool

	ip   LastIP
	time ptTime
	tcal tcal
	evq  evQueue
}

func (d *evDecoder) init(trace []byte, cfg Config, keepTcal, iflags bool) {
	cfg.IgnoreBlocks = true
	d.cfg = cfg
	d.pkt = *NewDecoder(trace, cfg)
	d.keepTcal, d.iflagsEvents = keepTcal, iflags
	d.reset()
}

func (d *evDecoder) reset() {
	d.packet = Packet{Kind: KindInvalid}
	d.status = eNoSync
	d.haveEv = false
	d.enabled, d.bound, d.modeExecValid = false, false, false
	d.ip = LastIP{}
	d.time = ptTime{}
	d.tcal = newTCal()
	d.evq = evQueue{}
}

// pktErr maps a packet decoder error to a status.
func pktErr(err error) int {
	switch {
	case err == io.EOF, errors.Is(err, ErrTruncated):
		return eEOS
	case errors.Is(err, ErrBadOpcode):
		return eBadOpc
	case errors.Is(err, ErrBadPacket):
		return eBadPacket
	case errors.Is(err, ErrNoSync):
		return eNoSync
	}
	return eInternal
}

func tcodeErr(c tcode) int {
	switch c {
	case tOK, tBadConfig:
		return 0
	case tBadPacket:
		return eBadPacket
	case tBadContext:
		return eBadContext
	case tNoTime:
		return eNoTime
	case tBadOpcode:
		return eBadOpc
	case tEOS:
		return eEOS
	case tNoSync:
		return eNoSync
	case tNoIP:
		return eNoIP
	}
	return eInternal
}

// fetchPacket reads the next non-PAD packet into d.packet; an error is
// stored in d.status and d.packet becomes KindInvalid of size 0.
func (d *evDecoder) fetchPacket() int {
	for {
		off := d.pkt.Offset()
		if err := d.pkt.Next(&d.packet); err != nil {
			d.packet = Packet{Kind: KindInvalid}
			d.pktOff = off
			d.status = pktErr(err)
			return 0
		}
		d.pktOff = off
		if d.packet.Kind != KindPad {
			return 0
		}
	}
}

// offset is the offset of the packet being processed.
func (d *evDecoder) offset() int64 { return d.pktOff }

func (d *evDecoder) syncOffset() int64 { return d.pkt.SyncOffset() }

func (d *evDecoder) standalone() *Event {
	d.ev = Event{}
	d.haveEv = true
	return &d.ev
}

func (d *evDecoder) dequeue(b uint8) *Event {
	i := d.evq.peek(b)
	if i < 0 {
		return nil
	}
	d.ev = d.evq.remove(i)
	d.haveEv = true
	return &d.ev
}

func (d *evDecoder) eventTime(ev *Event) {
	t := &d.time
	ev.TSC, ev.LostMTC, ev.LostCyc = t.tsc, t.lostMTC, t.lostCyc
	ev.HasTSC = t.haveTSC
}

// eventIP sets *ip from the last IP or marks ev IP-suppressed.
func (d *evDecoder) eventIP(ev *Event, ip *uint64) {
	if !d.ip.Have || d.ip.Suppressed {
		*ip = 0
		ev.IPSuppressed = true
		return
	}
	*ip = d.ip.IP
}

func (d *evDecoder) updateIP(p *Packet) int {
	if d.ip.Update(p.IPC, p.Payload) != nil {
		return eBadPacket
	}
	return 0
}

func applyTSC(t *ptTime, c *tcal, tsc uint64, header bool) int {
	if header {
		if e := tcodeErr(c.headerTSC(tsc)); e < 0 {
			return e
		}
	} else if e := tcodeErr(c.updateTSC(tsc)); e < 0 {
		return e
	}
	return tcodeErr(t.updateTSC(tsc))
}

func applyCBR(t *ptTime, c *tcal, ratio uint8, cfg *Config, header bool) int {
	if header {
		if e := tcodeErr(c.headerCBR(ratio, cfg)); e < 0 {
			return e
		}
	} else if e := tcodeErr(c.updateCBR(ratio, cfg)); e < 0 {
		return e
	}
	return tcodeErr(t.updateCBR(ratio))
}

func applyTMA(t *ptTime, p *Packet, cfg *Config) int {
	return tcodeErr(t.updateTMA(uint32(p.Payload), uint64(p.Aux), cfg))
}

func applyMTC(t *ptTime, c *tcal, p *Packet, cfg *Config) int {
	if e := tcodeErr(c.updateMTC(uint8(p.Payload), cfg)); e < 0 {
		return e
	}
	return tcodeErr(t.updateMTC(uint8(p.Payload), cfg))
}

func applyCyc(t *ptTime, c *tcal, p *Packet, cfg *Config) int {
	if e := tcodeErr(c.updateCyc(p.Payload)); e < 0 {
		return e
	}
	fcr, code := c.getFCR()
	if code != tOK {
		fcr = 0
	}
	return tcodeErr(t.updateCyc(p.Payload, cfg, fcr))
}

// applyTiming applies a timing packet to t and c; other packets are ignored.
func applyTiming(t *ptTime, c *tcal, p *Packet, cfg *Config) int {
	switch p.Kind {
	case KindTSC:
		return applyTSC(t, c, p.Payload, false)
	case KindCBR:
		return applyCBR(t, c, uint8(p.Payload), cfg, false)
	case KindTMA:
		return applyTMA(t, p, cfg)
	case KindMTC:
		return applyMTC(t, c, p, cfg)
	case KindCYC:
		return applyCyc(t, c, p, cfg)
	}
	return 0
}

func nextPacket(pd *Decoder, p *Packet) int {
	if err := pd.Next(p); err != nil {
		return pktErr(err)
	}
	return 0
}

func (d *evDecoder) findHeaderFUP(pd Decoder, p *Packet) int {
	for {
		if e := nextPacket(&pd, p); e < 0 {
			return e
		}
		switch p.Kind {
		case KindFUP:
			return 1
		case KindModeExec, KindModeTSX, KindPIP, KindVMCS, KindMNT, KindTSC,
			KindCBR, KindTMA, KindMTC, KindCYC, KindPad, KindInvalid:
		case KindPSBEnd, KindOVF:
			return 0
		default:
			return eBadContext
		}
	}
}

func (d *evDecoder) checkBDM70() int {
	pd := d.pkt
	var p Packet
	for {
		if e := nextPacket(&pd, &p); e < 0 {
			if e == eEOS {
				return 0
			}
			return e
		}
		switch p.Kind {
		case KindTIPPGE:
			return 1
		case KindPad, KindTSC, KindCBR, KindPSBEnd, KindPIP, KindModeExec,
			KindModeTSX, KindVMCS, KindTMA, KindMTC, KindCYC, KindMNT:
		default:
			return 0
		}
	}
}

func (d *evDecoder) headerFUP(p *Packet) int {
	enabled := p.IPC != IPCSuppressed
	if d.cfg.Errata.BDM70 {
		e := d.checkBDM70()
		if e < 0 {
			return e
		}
		if e > 0 {
			enabled = false
		}
	}
	d.enabled = enabled
	if !enabled {
		return 0
	}
	return d.updateIP(p)
}

func (d *evDecoder) headerModeExec(p *Packet) int {
	iflag, csd, csl := p.Has(FlagIF), p.Has(FlagCSD), p.Has(FlagCSL)
	if d.modeExecValid {
		if d.iflagsEvents && d.iflag != iflag {
			return eBadStatusUpdate
		}
		if d.csd != csd || d.csl != csl {
			return eBadStatusUpdate
		}
	} else {
		d.modeExecValid = true
		d.iflag, d.csd, d.csl = iflag, csd, csl
	}
	ev := d.evq.enqueue(evbPSBEnd)
	if ev == nil {
		return eNoMem
	}
	ev.StatusUpdate = true
	ev.Type = EvExecMode
	ev.Mode = execModeOf(csl, csd)
	if d.iflagsEvents {
		ev = d.evq.enqueue(evbPSBEnd)
		if ev == nil {
			return eNoMem
		}
		ev.StatusUpdate = true
		ev.Type = EvIFlags
		ev.IFlag = iflag
	}
	return 0
}

func (d *evDecoder) decodePSB() int {
	if d.evq.n != 0 {
		return eBadContext
	}
	d.ip = LastIP{}
	d.enabled = false
	ev := d.evq.enqueue(evbPSBEnd)
	if ev == nil {
		return eNoMem
	}
	ev.StatusUpdate = true
	psbIdx := d.evq.n - 1
	cfg := &d.cfg
	for {
		d.fetchPacket()
		p := &d.packet
		e := 0
		switch p.Kind {
		case KindFUP:
			e = d.headerFUP(p)
		case KindModeExec:
			e = d.headerModeExec(p)
		case KindModeTSX:
			ev := d.evq.enqueue(evbPSBEnd)
			if ev == nil {
				return eNoMem
			}
			ev.StatusUpdate = true
			ev.Type = EvTSX
			ev.Speculative, ev.Aborted = p.Has(FlagInTX), p.Has(FlagAbort)
		case KindPIP:
			ev := d.evq.enqueue(evbPSBEnd)
			if ev == nil {
				return eNoMem
			}
			ev.StatusUpdate = true
			ev.Type = EvAsyncPaging
			ev.CR3, ev.NonRoot = p.Payload, p.Has(FlagNR)
		case KindVMCS:
			ev := d.evq.enqueue(evbPSBEnd)
			if ev == nil {
				return eNoMem
			}
			ev.StatusUpdate = true
			ev.Type = EvAsyncVMCS
			ev.Base = p.Payload
		case KindMNT:
			ev := d.evq.enqueue(evbPSBEnd)
			if ev == nil {
				return eNoMem
			}
			ev.Type = EvMNT
			ev.Payload = p.Payload
		case KindTSC:
			e = applyTSC(&d.time, &d.tcal, p.Payload, true)
		case KindCBR:
			e = applyCBR(&d.time, &d.tcal, uint8(p.Payload), cfg, true)
			if e == 0 {
				ev := d.evq.enqueue(evbPSBEnd)
				if ev == nil {
					return eNoMem
				}
				ev.StatusUpdate = true
				ev.Type = EvCBR
				ev.Ratio = uint8(p.Payload)
			}
		case KindTMA:
			e = applyTMA(&d.time, p, cfg)
		case KindMTC:
			e = applyMTC(&d.time, &d.tcal, p, cfg)
		case KindCYC:
			e = applyCyc(&d.time, &d.tcal, p, cfg)
		case KindPSBEnd:
			ev := &d.evq.q[psbIdx].ev
			if d.enabled {
				ev.Type = EvEnabled
			} else {
				ev.Type = EvDisabled
				ev.IPSuppressed = true
			}
			return 1
		case KindOVF:
			if d.enabled {
				d.evq.q[psbIdx].ev.Type = EvEnabled
			} else {
				if d.evq.peek(evbPSBEnd) != psbIdx {
					return eInternal
				}
				d.evq.remove(psbIdx)
			}
			return 1
		case KindPad:
		case KindInvalid:
			e = d.status
		default:
			e = eBadContext
		}
		if e < 0 {
			return e
		}
	}
}

func (d *evDecoder) start() int {
	d.status = 0
	d.fetchPacket()
	switch d.packet.Kind {
	case KindPSB:
		if e := d.decodePSB(); e < 0 {
			return e
		}
		return 0
	case KindInvalid:
		if d.status < 0 {
			return d.status
		}
		return eInternal
	}
	return eNoSync
}

func (d *evDecoder) syncForward() int {
	d.reset()
	if err := d.pkt.SyncForward(); err != nil {
		return eEOS
	}
	return d.start()
}

func (d *evDecoder) syncSet(off int64) int {
	d.reset()
	if err := d.pkt.SetOffset(off); err != nil {
		return eEOS
	}
	return d.start()
}

func (d *evDecoder) decodePSBEnd() int {
	ev := d.dequeue(evbPSBEnd)
	if ev == nil {
		return 1
	}
	switch ev.Type {
	case EvEnabled, EvExecMode, EvIFlags, EvTSX, EvAsyncPaging, EvAsyncVMCS:
		d.eventIP(ev, &ev.IP)
	case EvDisabled, EvCBR, EvMNT:
	default:
		return eBadContext
	}
	d.eventTime(ev)
	return 0
}

func (d *evDecoder) decodeFUP(p *Packet) int {
	if e := d.updateIP(p); e < 0 {
		return e
	}
	if d.evq.pending(evbFUPBound) {
		d.bound = true
	}
	ev := d.dequeue(evbFUP | evbFUPBound)
	if ev == nil {
		if d.bound {
			return 1
		}
		if !d.ip.Have {
			return eNoIP
		}
		if d.ip.Suppressed {
			return eIPSuppressed
		}
		from := d.ip.IP
		ev := d.evq.enqueue(evbTIP)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvAsyncBranch
		ev.At = from
		return 1
	}
	switch ev.Type {
	case EvOverflow:
		d.eventIP(ev, &ev.IP)
		d.enabled = true
	case EvRSM, EvSIPI:
		d.eventTime(ev)
		if !ev.IPSuppressed {
			return eInternal
		}
	case evIgnore:
		d.haveEv = false
		return d.decodeFUP(p)
	case EvTSX, EvExStop, EvMWait, EvPTWrite, EvExecMode, EvIFlags, EvInterrupt,
		EvIret, EvSMI, EvInit, EvVMEntry, EvVMExit, EvShutdown, EvUIntr, EvUIret,
		EvTrig, EvSwIntr, EvSyscall:
		d.eventTime(ev)
		d.eventIP(ev, &ev.IP)
	default:
		return eBadContext
	}
	return 0
}

func (d *evDecoder) findOVFFUP() int {
	pd := d.pkt
	var p Packet
	off := 0
	for {
		if e := nextPacket(&pd, &p); e < 0 {
			return e
		}
		if p.Size == 0 {
			return eBadPacket
		}
		off += int(p.Size)
		switch p.Kind {
		case KindFUP:
			return off
		case KindPad, KindMNT, KindCBR, KindTSC, KindTMA, KindMTC, KindCYC, KindInvalid:
		case KindPSBEnd, KindTIP, KindTIPPGD, KindTNT8, KindTNT64:
			return eBadContext
		default:
			return 0
		}
	}
}

func (d *evDecoder) recoverOVFAtIP(pd *Decoder, p *Packet, ipp *Packet, t *ptTime, c *tcal) int {
	if e := d.updateIP(ipp); e < 0 {
		return e
	}
	ev := d.standalone()
	ev.Type = EvOverflow
	d.eventTime(ev)
	d.pkt = *pd
	d.packet = *p
	d.time = *t
	d.tcal = *c
	d.enabled = true
	d.eventIP(ev, &ev.IP)
	return 0
}

func (d *evDecoder) recoverOVFDisabled(pd *Decoder, p *Packet, t *ptTime, c *tcal) {
	ev := d.standalone()
	ev.Type = EvOverflow
	ev.IPSuppressed = true
	d.eventTime(ev)
	d.pkt = *pd
	d.packet = *p
	d.time = *t
	d.tcal = *c
}

func (d *evDecoder) recoverOVFAtOffset(off int) int {
	for {
		start := d.pkt.Offset()
		if e := nextPacket(&d.pkt, &d.packet); e < 0 {
			return e
		}
		d.pktOff = start
		sz := int(d.packet.Size)
		if off <= sz {
			if off < sz {
				return eInternal
			}
			break
		}
		off -= sz
		switch d.packet.Kind {
		case KindModeExec, KindModeTSX, KindPIP, KindVMCS, KindInvalid:
			return eInternal
		}
		if e := applyTiming(&d.time, &d.tcal, &d.packet, &d.cfg); e < 0 {
			return e
		}
	}
	ev := d.standalone()
	ev.Type = EvOverflow
	ev.IPSuppressed = true
	d.eventTime(ev)
	d.fetchPacket()
	return 0
}

func (d *evDecoder) handleSKD010() int {
	pd := d.pkt
	t, c := d.time, d.tcal
	var tsxFound, intx, abrt bool
	var p Packet
	for {
		start := pd.Offset()
		if e := nextPacket(&pd, &p); e < 0 {
			if e == eEOS {
				return 1
			}
			return e
		}
		switch p.Kind {
		case KindTIPPGE, KindTNT8, KindTNT64, KindOVF, KindTraceStop, KindMWait, KindInvalid:
			return 1
		case KindTIPPGD:
			d.recoverOVFDisabled(&pd, &p, &t, &c)
			d.pktOff = start
			d.fetchPacket()
			return 0
		case KindPIP, KindVMCS, KindModeExec, KindPad, KindMNT, KindPwrE, KindPwrX, KindEVD, KindTrig:
		case KindModeTSX:
			if tsxFound {
				return 1
			}
			tsxFound, intx, abrt = true, p.Has(FlagInTX), p.Has(FlagAbort)
		case KindFUP:
			d.packet = p
			if tsxFound {
				ev := d.evq.enqueue(evbFUPBound)
				if ev == nil {
					return eNoMem
				}
				ev.Type = EvTSX
				ev.Speculative, ev.Aborted = intx, abrt
			}
			d.pktOff = start
			return d.recoverOVFAtIP(&pd, &p, &p, &t, &c)
		case KindTIP:
			if e := d.recoverOVFAtIP(&pd, &p, &p, &t, &c); e < 0 {
				return e
			}
			d.pktOff = start
			d.fetchPacket()
			return 0
		case KindPSB:
			var fup Packet
			e := d.findHeaderFUP(pd, &fup)
			if e < 0 {
				if e == eEOS {
					return 1
				}
				return e
			}
			if e == 0 {
				return 1
			}
			d.pktOff = start
			return d.recoverOVFAtIP(&pd, &p, &fup, &t, &c)
		case KindPSBEnd:
			return eBadContext
		case KindExStop, KindPTW, KindCFE:
			if p.Has(FlagIP) {
				return 1
			}
		default:
			if e := applyTiming(&t, &c, &p, &d.cfg); e < 0 {
				return e
			}
		}
	}
}

func (d *evDecoder) handleAPL11() int {
	pd := d.pkt
	t, c := d.time, d.tcal
	var p Packet
	for {
		start := pd.Offset()
		if e := nextPacket(&pd, &p); e < 0 {
			return e
		}
		switch p.Kind {
		case KindTIPPGD:
			d.recoverOVFDisabled(&pd, &p, &t, &c)
			d.pktOff = start
			d.fetchPacket()
			return 0
		case KindTSC, KindCBR, KindTMA, KindMTC, KindCYC:
			if e := applyTiming(&t, &c, &p, &d.cfg); e < 0 {
				return e
			}
		case KindPad, KindMNT, KindCFE, KindEVD, KindTrig:
		default:
			return 1
		}
	}
}

func (d *evDecoder) handleAPL12(off int) int {
	pd := d.pkt
	if err := pd.SetOffset(pd.Offset() + int64(off)); err != nil {
		return eInternal
	}
	var p Packet
	for {
		if e := nextPacket(&pd, &p); e < 0 {
			if e == eEOS {
				return 1
			}
			return e
		}
		switch p.Kind {
		case KindTNT8, KindTNT64, KindTIP, KindTIPPGD, KindPSBEnd, KindOVF, KindInvalid:
			return 1
		case KindPSB:
			var fup Packet
			e := d.findHeaderFUP(pd, &fup)
			if e != 0 {
				if e == eEOS {
					return 1
				}
				return e
			}
			return d.recoverOVFAtOffset(off)
		case KindTraceStop, KindTIPPGE:
			return d.recoverOVFAtOffset(off)
		}
	}
}

func (d *evDecoder) decodeOVF() int {
	if e := d.decodePSBEnd(); e <= 0 {
		return e
	}
	for !d.enabled {
		ev := d.dequeue(evbFUPBound | evbFUP | evbTIP | evbExStop | evbPwrX)
		if ev == nil {
			break
		}
		switch ev.Type {
		case EvExStop, EvMWait, EvPTWrite, EvTSX, EvExecMode, EvIFlags, EvInterrupt,
			EvIret, EvSMI, EvInit, EvVMEntry, EvVMExit, EvShutdown, EvUIntr, EvUIret,
			EvTrig, EvSwIntr, EvSyscall:
			ev.IPSuppressed = true
			return 0
		case EvPwrE, EvRSM, EvSIPI:
			return 0
		}
		d.haveEv = false
	}
	t, c := d.time, d.tcal
	d.reset()
	d.time = t
	if d.keepTcal {
		c.updateOVF()
		d.tcal = c
	}
	off := d.findOVFFUP()
	if off <= 0 {
		if d.cfg.Errata.SKD010 {
			if e := d.handleSKD010(); e <= 0 {
				return e
			}
		}
		if d.cfg.Errata.APL11 && off == eBadContext {
			if e := d.handleAPL11(); e <= 0 {
				return e
			}
		}
		if off < 0 && off != eEOS {
			return off
		}
		ev := d.standalone()
		ev.Type = EvOverflow
		ev.IPSuppressed = true
		d.eventTime(ev)
		d.fetchPacket()
		return 0
	}
	if d.cfg.Errata.APL12 {
		if e := d.handleAPL12(off); e <= 0 {
			return e
		}
	}
	ev := d.evq.enqueue(evbFUPBound)
	if ev == nil {
		return eNoMem
	}
	ev.Type = EvOverflow
	d.eventTime(ev)
	return 1
}

func (d *evDecoder) decodeTIPEvent() int {
	d.bound = true
	a := d.evq.find(evbTIP, EvAsyncBranch)
	if a >= 0 {
		h := d.evq.peek(evbTIP)
		async := d.evq.q[a].ev
		if h != a {
			head := d.evq.remove(h)
			d.evq.q[a-1].ev = head
		} else {
			d.evq.remove(a)
		}
		d.ev, d.haveEv = async, true
		ev := &d.ev
		d.eventIP(ev, &ev.IP)
		d.eventTime(ev)
		return 0
	}
	ev := d.standalone()
	ev.Type = EvTIP
	d.eventIP(ev, &ev.IP)
	d.eventTime(ev)
	return 0
}

func (d *evDecoder) decodeTIP(p *Packet) int {
	if !d.enabled {
		return eBadContext
	}
	if e := d.updateIP(p); e < 0 {
		return e
	}
	return d.tipBound()
}

func (d *evDecoder) tipBound() int {
	if !d.bound {
		return d.decodeTIPEvent()
	}
	ev := d.dequeue(evbTIP)
	if ev == nil {
		return 1
	}
	switch ev.Type {
	case EvExecMode, EvAsyncPaging, EvAsyncVMCS, EvIFlags:
		d.eventIP(ev, &ev.IP)
	case evIgnore:
		d.haveEv = false
		return d.tipBound()
	default:
		return eBadContext
	}
	d.eventTime(ev)
	return 0
}

func (d *evDecoder) decodeTIPPGE(p *Packet) int {
	if e := d.updateIP(p); e < 0 {
		return e
	}
	return d.pgeBound()
}

func (d *evDecoder) pgeBound() int {
	if !d.bound {
		ev := d.standalone()
		ev.Type = EvEnabled
		d.eventIP(ev, &ev.IP)
		d.enabled = true
		d.bound = true
		d.eventTime(ev)
		return 0
	}
	ev := d.dequeue(evbTIP)
	if ev == nil {
		return 1
	}
	switch ev.Type {
	case EvExecMode, EvIFlags:
		d.eventIP(ev, &ev.IP)
	case evIgnore:
		d.haveEv = false
		return d.pgeBound()
	default:
		return eBadContext
	}
	d.eventTime(ev)
	return 0
}

func (d *evDecoder) decodeTIPPGD(p *Packet) int {
	if e := d.updateIP(p); e < 0 {
		return e
	}
	ev := d.dequeue(evbTIP)
	if ev == nil {
		if d.bound {
			return 1
		}
		ev = d.standalone()
		ev.Type = EvDisabled
		d.eventIP(ev, &ev.IP)
		d.eventTime(ev)
		d.enabled = false
		d.fetchPacket()
		return 0
	}
	switch ev.Type {
	case EvAsyncBranch:
		ev.Type = EvAsyncDisabled
		d.eventIP(ev, &ev.IP)
		d.enabled = false
		d.bound = true
	case EvAsyncPaging, EvAsyncVMCS:
		if !d.bound {
			return eInternal
		}
		ev.IPSuppressed = true
	case EvExecMode:
		ev.IPSuppressed = true
	default:
		return eBadContext
	}
	d.eventTime(ev)
	return 0
}

func (d *evDecoder) decodeModeExec(p *Packet) int {
	csl, csd, iflag := p.Has(FlagCSL), p.Has(FlagCSD), p.Has(FlagIF)
	n := 0
	if !d.modeExecValid || d.csl != csl || d.csd != csd {
		ev := d.evq.enqueue(evbTIP | evbFUPBound)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvExecMode
		ev.Mode = execModeOf(csl, csd)
		d.csl, d.csd = csl, csd
		n++
	}
	if d.iflagsEvents && (!d.modeExecValid || d.iflag != iflag) {
		ev := d.evq.enqueue(evbTIP | evbFUPBound)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvIFlags
		ev.IFlag = iflag
		d.iflag = iflag
		n++
	}
	if n == 0 {
		ev := d.evq.enqueue(evbTIP | evbFUPBound)
		if ev == nil {
			return eNoMem
		}
		ev.Type = evIgnore
	}
	d.modeExecValid = true
	return 1
}

func (d *evDecoder) decodeModeTSX(p *Packet) int {
	intx, abrt := p.Has(FlagInTX), p.Has(FlagAbort)
	if d.enabled {
		b := uint8(evbFUPBound)
		if abrt {
			b = evbFUP
		}
		ev := d.evq.enqueue(b)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvTSX
		ev.Speculative, ev.Aborted = intx, abrt
		return 1
	}
	ev := d.standalone()
	ev.Type = EvTSX
	ev.Speculative, ev.Aborted = intx, abrt
	ev.IPSuppressed = true
	d.eventTime(ev)
	d.fetchPacket()
	return 0
}

func (d *evDecoder) decodePIP(p *Packet) int {
	if d.evq.find(evbTIP, EvAsyncBranch) >= 0 {
		ev := d.evq.enqueue(evbTIP)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvAsyncPaging
		ev.CR3, ev.NonRoot = p.Payload, p.Has(FlagNR)
		return 1
	}
	ev := d.standalone()
	ev.Type = EvPaging
	ev.CR3, ev.NonRoot = p.Payload, p.Has(FlagNR)
	d.eventTime(ev)
	d.fetchPacket()
	return 0
}

func (d *evDecoder) decodeVMCS(p *Packet) int {
	if i := d.evq.find(evbTIP, EvAsyncPaging); i >= 0 {
		paging := d.evq.enqueue(evbTIP)
		if paging == nil {
			return eNoMem
		}
		*paging = d.evq.q[i].ev
		d.evq.q[i].ev = Event{Type: EvAsyncVMCS, Base: p.Payload}
		return 1
	}
	if d.evq.find(evbTIP, EvAsyncBranch) >= 0 {
		ev := d.evq.enqueue(evbTIP)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvAsyncVMCS
		ev.Base = p.Payload
		return 1
	}
	ev := d.standalone()
	ev.Type = EvVMCS
	ev.Base = p.Payload
	d.eventTime(ev)
	d.fetchPacket()
	return 0
}

// simple makes a standalone event of type t, timed, and moves on.
func (d *evDecoder) simple(t EventType) *Event {
	ev := d.standalone()
	ev.Type = t
	d.eventTime(ev)
	return ev
}

func (d *evDecoder) decodeExStop(p *Packet) int {
	if i := d.evq.peek(evbExStop); i >= 0 {
		if d.evq.q[i].ev.Type != EvMWait {
			return eInternal
		}
		if p.Has(FlagIP) {
			mw := d.evq.remove(i)
			ev := d.evq.enqueue(evbFUPBound)
			if ev == nil {
				return eNoMem
			}
			*ev = mw
			// fall through to queue the exstop as well (libipt reuses
			// the dequeued slot for the mwait and then queues exstop)
		} else {
			d.ev, d.haveEv = d.evq.remove(i), true
			ev := &d.ev
			ev.IP = 0
			ev.IPSuppressed = true
			d.eventTime(ev)
			return 0
		}
	}
	if p.Has(FlagIP) {
		ev := d.evq.enqueue(evbFUPBound)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvExStop
		return 1
	}
	ev := d.simple(EvExStop)
	ev.IPSuppressed = true
	d.fetchPacket()
	return 0
}

func (d *evDecoder) decodeCFE(p *Packet) int {
	var ev *Event
	if i := d.evq.peek(evbCFE); i >= 0 {
		d.ev, d.haveEv = d.evq.remove(i), false
		ev = &d.ev
	}
	hasIP := p.Has(FlagIP)
	// requeue queues a copy of e bound to b.
	requeue := func(e *Event, b uint8) int {
		r := d.evq.enqueue(b)
		if r == nil {
			return eNoMem
		}
		*r = *e
		return 1
	}
	finish := func(e *Event) int {
		d.ev = *e
		d.haveEv = true
		d.ev.IPSuppressed = true
		d.eventTime(&d.ev)
		d.fetchPacket()
		return 0
	}
	fresh := func(t EventType) *Event {
		d.ev = Event{Type: t}
		return &d.ev
	}
	// plain: events that bind to a FUP when IP is set, to the next FUP when
	// enabled (if allowFUP), else stand alone.
	plain := func(t EventType, allowFUP bool, vector bool) int {
		if ev != nil {
			return eBadContext
		}
		e := fresh(t)
		if vector {
			e.Vector = p.Type
			e.Vector = uint8(p.Aux)
		}
		if hasIP {
			return requeue(e, evbFUPBound)
		}
		if allowFUP && d.enabled {
			return requeue(e, evbFUP)
		}
		return finish(e)
	}
	switch p.Type {
	case 1: // intr
		if ev == nil {
			ev = fresh(EvInterrupt)
		}
		if ev.Type != EvInterrupt {
			return eBadContext
		}
		ev.Vector = uint8(p.Aux)
		if hasIP {
			return requeue(ev, evbFUPBound)
		}
		if d.enabled {
			return requeue(ev, evbFUP)
		}
		return finish(ev)
	case 2: // iret
		return plain(EvIret, false, false)
	case 3: // smi
		return plain(EvSMI, true, false)
	case 4, 5: // rsm, sipi
		if ev != nil {
			return eBadContext
		}
		if hasIP {
			return eBadPacket
		}
		t := EvRSM
		if p.Type == 5 {
			t = EvSIPI
		}
		e := fresh(t)
		e.IPSuppressed = true
		if t == EvSIPI {
			e.Vector = uint8(p.Aux)
		}
		if d.enabled {
			return requeue(e, evbFUP)
		}
		return finish(e)
	case 6: // init
		return plain(EvInit, true, false)
	case 7: // vmentry
		return plain(EvVMEntry, false, false)
	case 8, 9: // vmexit, vmexit_intr
		if ev == nil {
			ev = fresh(EvVMExit)
		}
		if ev.Type != EvVMExit {
			return eBadContext
		}
		if p.Type == 9 {
			ev.HasVector = true
			ev.Vector = uint8(p.Aux)
		}
		if hasIP {
			return requeue(ev, evbFUPBound)
		}
		if d.enabled {
			return requeue(ev, evbFUP)
		}
		return finish(ev)
	case 10: // shutdown
		return plain(EvShutdown, false, false)
	case 12: // uintr
		return plain(EvUIntr, true, true)
	case 13: // uiret
		return plain(EvUIret, false, false)
	case 14: // swintr
		return plain(EvSwIntr, true, true)
	case 15: // syscall
		return plain(EvSyscall, false, false)
	}
	if ev != nil {
		return eInternal
	}
	if hasIP {
		e := d.evq.enqueue(evbFUPBound)
		if e == nil {
			return eNoMem
		}
		e.Type = evIgnore
	}
	return 1
}

func (d *evDecoder) decodeEVD(p *Packet) int {
	i := d.evq.peek(evbCFE)
	switch p.Type {
	case 0: // cr2
		if i >= 0 {
			return eBadContext
		}
		ev := d.evq.enqueue(evbCFE)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvInterrupt
		ev.HasCR2, ev.CR2 = true, p.Payload
	case 1, 2: // vmxq, vmxr
		var ev *Event
		if i < 0 {
			ev = d.evq.enqueue(evbCFE)
			if ev == nil {
				return eNoMem
			}
			ev.Type = EvVMExit
		} else {
			ev = &d.evq.q[i].ev
		}
		if ev.Type != EvVMExit {
			return eBadContext
		}
		if p.Type == 1 {
			if ev.HasVMXQ {
				return eBadContext
			}
			ev.HasVMXQ, ev.VMXQ = true, p.Payload
		} else {
			if ev.HasVMXR {
				return eBadContext
			}
			ev.HasVMXR, ev.VMXR = true, p.Payload
		}
	}
	return 1
}

func (d *evDecoder) decodeTrig(p *Packet) int {
	if p.Has(FlagIP) {
		if !p.Has(FlagICNTValid) || p.Aux != 0 {
			return eBadPacket
		}
		ev := d.evq.enqueue(evbFUPBound)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvTrig
		ev.TRBV, ev.Mult = p.Type, p.Has(FlagMult)
		return 1
	}
	ev := d.standalone()
	ev.Type = EvTrig
	ev.TRBV, ev.Mult = p.Type, p.Has(FlagMult)
	if p.Has(FlagICNTValid) {
		if p.Aux != 0 && !d.enabled {
			return eBadPacket
		}
		ev.ICnt = uint16(p.Aux)
	} else {
		ev.IPSuppressed = true
	}
	d.eventTime(ev)
	d.fetchPacket()
	return 0
}

// decodePacket processes d.packet. It returns 1 to go on with the next
// packet, 0 when an event is ready, or a negative error.
func (d *evDecoder) decodePacket() int {
	p := &d.packet
	cfg := &d.cfg
	switch p.Kind {
	case KindTNT8, KindTNT64:
		if !d.enabled {
			return eBadContext
		}
		ev := d.simple(EvTNT)
		ev.Payload, ev.Size = p.Payload, p.Bits
		d.fetchPacket()
		return 0
	case KindCYC:
		if e := applyCyc(&d.time, &d.tcal, p, cfg); e < 0 {
			return e
		}
		return 1
	case KindPad:
		return 1
	case KindFUP:
		return d.decodeFUP(p)
	case KindTIP:
		return d.decodeTIP(p)
	case KindMTC:
		if e := applyMTC(&d.time, &d.tcal, p, cfg); e < 0 {
			return e
		}
		return 1
	case KindTSC:
		if e := applyTSC(&d.time, &d.tcal, p.Payload, false); e < 0 {
			return e
		}
		return 1
	case KindCBR:
		if e := applyCBR(&d.time, &d.tcal, uint8(p.Payload), cfg, false); e < 0 {
			return e
		}
		ev := d.simple(EvCBR)
		ev.Ratio = uint8(p.Payload)
		d.fetchPacket()
		return 0
	case KindTMA:
		if e := applyTMA(&d.time, p, cfg); e < 0 {
			return e
		}
		return 1
	case KindModeExec:
		return d.decodeModeExec(p)
	case KindModeTSX:
		return d.decodeModeTSX(p)
	case KindPIP:
		return d.decodePIP(p)
	case KindPTW:
		size := uint8(4)
		if p.Bits == 1 {
			size = 8
		} else if p.Bits != 0 {
			return eBadPacket
		}
		if p.Has(FlagIP) {
			ev := d.evq.enqueue(evbFUPBound)
			if ev == nil {
				return eNoMem
			}
			ev.Type = EvPTWrite
			ev.Size, ev.Payload = size, p.Payload
			return 1
		}
		ev := d.simple(EvPTWrite)
		ev.Size, ev.Payload = size, p.Payload
		ev.IPSuppressed = true
		d.fetchPacket()
		return 0
	case KindPSB:
		if e := d.decodePSB(); e <= 0 {
			return e
		}
		return d.decodePacket()
	case KindPSBEnd:
		return d.decodePSBEnd()
	case KindTIPPGE:
		return d.decodeTIPPGE(p)
	case KindTIPPGD:
		return d.decodeTIPPGD(p)
	case KindExStop:
		return d.decodeExStop(p)
	case KindPwrE:
		ev := d.evq.enqueue(evbPwrX)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvPwrE
		ev.State, ev.Sub, ev.HW = p.Type, p.Sub, p.Has(FlagHW)
		d.eventTime(ev)
		return 1
	case KindPwrX:
		if i := d.evq.peek(evbPwrX); i >= 0 {
			d.ev, d.haveEv = d.evq.remove(i), true
			if d.ev.Type != EvPwrE {
				return eInternal
			}
			return 0
		}
		ev := d.simple(EvPwrX)
		ev.State, ev.Sub = p.Type, p.Sub
		ev.Interrupt, ev.Store, ev.Autonomous = p.Has(FlagInterrupt), p.Has(FlagStore), p.Has(FlagAutonomous)
		d.fetchPacket()
		return 0
	case KindMWait:
		ev := d.evq.enqueue(evbExStop)
		if ev == nil {
			return eNoMem
		}
		ev.Type = EvMWait
		ev.Hints, ev.Ext = uint32(p.Payload), p.Aux
		return 1
	case KindVMCS:
		return d.decodeVMCS(p)
	case KindOVF:
		return d.decodeOVF()
	case KindTraceStop:
		d.simple(EvStop)
		d.fetchPacket()
		return 0
	case KindMNT:
		ev := d.simple(EvMNT)
		ev.Payload = p.Payload
		d.fetchPacket()
		return 0
	case KindCFE:
		return d.decodeCFE(p)
	case KindEVD:
		return d.decodeEVD(p)
	case KindTrig:
		return d.decodeTrig(p)
	case KindInvalid:
		if d.status < 0 {
			return d.status
		}
		return 1
	}
	return 1 // BBP/BIP/BEP are not decoded (libipt ignores them)
}

// next decodes the next event into *ev.
func (d *evDecoder) next(ev *Event) int {
	for {
		e := d.decodePacket()
		if e <= 0 {
			if e < 0 {
				return e
			}
			break
		}
		if d.haveEv {
			return eInternal
		}
		d.bound = false
		d.fetchPacket()
	}
	*ev = d.ev
	d.haveEv = false
	return 0
}
