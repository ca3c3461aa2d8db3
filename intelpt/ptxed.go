package intelpt

import (
	"bufio"
	"io"
	"strconv"
)

// FlowOptions select what FlowListing prints; the names follow ptxed's
// options (--block-decoder, --block:show-blocks, --event:ip, ...).
type FlowOptions struct {
	BlockDecoder  bool // use the block decoder (ptxed's default); else the instruction decoder
	ShowBlocks    bool // --block:show-blocks
	Quiet         bool // --quiet: print only errors (and statistics)
	Offset        bool // --offset: print the trace offset
	Time          bool // --time: print the time of each instruction
	EventTime     bool // --event:time
	EventIP       bool // --event:ip
	ResyncOnError bool // --resync-on-error
	Stat          bool // --stat
	StatInsn      bool // --stat:insn
	StatBlocks    bool // --stat:blocks
	JSON          bool // one JSON object per line per instruction, block, event or error
	// Progress, when set, is called now and then (every 65,536 blocks or
	// instructions) with the trace offset reached, for a progress line.
	Progress func(offset int64)
}

// FlowStats are the counts FlowListing collected.
type FlowStats struct {
	Insns, Blocks uint64
	Errors        uint64 // decoding errors reported
}

// flowLister prints a flow listing like ptxed --no-inst.
type flowLister struct {
	w     *bufio.Writer
	o     FlowOptions
	cfg   FlowConfig
	insn  *InsnDecoder
	blk   *BlockDecoder
	stats FlowStats
	time  uint64
	buf   []byte

	lastErrOff int64 // offset of the last error, to stop resyncing in place
	sameErr    int
}

// progress reports whether resynchronising after an error may get
// further: errors at the same trace offset again and again (which a
// resync at the same PSB can cause on bad input) end the resync loop;
// decoding then goes on at the next PSB.
func (l *flowLister) progress() bool {
	off := l.offset()
	if off > l.lastErrOff {
		l.lastErrOff, l.sameErr = off, 0
		return true
	}
	l.sameErr++
	return l.sameErr < 4
}

// FlowListing decodes trace over cfg.Image and writes what ptxed prints for
// the same options with --no-inst (addresses, events, errors, statistics),
// or JSON lines with o.JSON. Decoding errors are part of the listing (like
// ptxed, decoding goes on at the next PSB); the returned error is a write
// error.
func FlowListing(w io.Writer, trace []byte, cfg FlowConfig, o FlowOptions) (FlowStats, error) {
	l := &flowLister{w: bufio.NewWriterSize(w, 64<<10), o: o, cfg: cfg, lastErrOff: -1}
	if o.BlockDecoder {
		l.blk = NewBlockDecoder(trace, cfg)
		l.runBlock()
	} else {
		l.insn = NewInsnDecoder(trace, cfg)
		l.runInsn()
	}
	if o.Stat || o.StatInsn || o.StatBlocks {
		insn, blocks := o.StatInsn, o.StatBlocks
		if !insn && !blocks {
			insn, blocks = true, o.BlockDecoder
		}
		if o.JSON {
			b := append(l.buf[:0], `{"type":"stat"`...)
			if insn {
				b = append(b, `,"insn":`...)
				b = strconv.AppendUint(b, l.stats.Insns, 10)
			}
			if blocks {
				b = append(b, `,"blocks":`...)
				b = strconv.AppendUint(b, l.stats.Blocks, 10)
			}
			l.w.Write(append(b, "}\n"...))
		} else {
			if insn {
				l.printf("insn: ", l.stats.Insns, ".\n")
			}
			if blocks {
				l.printf("blocks:\t", l.stats.Blocks, ".\n")
			}
		}
	}
	return l.stats, l.w.Flush()
}

func (l *flowLister) printf(pre string, v uint64, post string) {
	b := append(l.buf[:0], pre...)
	b = strconv.AppendUint(b, v, 10)
	l.w.Write(append(b, post...))
}

func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	var t [16]byte
	for i := 15; i >= 0; i-- {
		t[i] = digits[v&15]
		v >>= 4
	}
	return append(b, t[:]...)
}

func appendHex(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 16) }

func (l *flowLister) offset() int64 {
	if l.blk != nil {
		return l.blk.Offset()
	}
	return l.insn.b.Offset()
}

func (l *flowLister) dec() *BlockDecoder {
	if l.blk != nil {
		return l.blk
	}
	return &l.insn.b
}

// diagnose prints an error like ptxed: [offset, ip: what: message].
func (l *flowLister) diagnose(ip uint64, what string, code int) {
	l.stats.Errors++
	pos := uint64(l.offset())
	b := l.buf[:0]
	if l.o.JSON {
		b = append(b, `{"type":"error","offset":`...)
		b = strconv.AppendUint(b, pos, 10)
		b = append(b, `,"ip":"0x`...)
		b = appendHex(b, ip)
		b = append(b, `","what":"`...)
		b = append(b, what...)
		b = append(b, `","error":"`...)
		b = append(b, errStr(code)...)
		b = append(b, "\"}\n"...)
	} else {
		b = append(b, '[')
		b = appendHex(b, pos)
		b = append(b, ", "...)
		b = appendHex(b, ip)
		b = append(b, ": "...)
		b = append(b, what...)
		b = append(b, ": "...)
		b = append(b, errStr(code)...)
		b = append(b, "]\n"...)
	}
	l.buf = b
	l.w.Write(b)
}

// nextIP is ptxed's xed_next_ip: the IP after the instruction at ip,
// following direct branch displacements.
func (l *flowLister) nextIP(ip uint64, mode ExecMode) (uint64, bool) {
	x := insn{ip: ip}
	x.mode = mode
	if l.dec().decodeInsn(&x) < 0 {
		return ip, false
	}
	n := ip + uint64(x.size)
	if x.direct() {
		n += uint64(int64(x.disp))
	}
	return n, true
}

func (l *flowLister) line(ip uint64, speculative bool, off int64) {
	b := l.buf[:0]
	if l.o.JSON {
		b = append(b, `{"type":"insn","ip":"0x`...)
		b = appendHex(b, ip)
		b = append(b, '"')
		if speculative {
			b = append(b, `,"speculative":true`...)
		}
		if l.o.Time {
			b = append(b, `,"time":`...)
			b = strconv.AppendUint(b, l.time, 10)
		}
		b = append(b, "}\n"...)
	} else {
		if l.o.Offset {
			b = appendHex16(b, uint64(off))
			b = append(b, "  "...)
		}
		if l.o.Time {
			b = appendHex16(b, l.time)
			b = append(b, "  "...)
		}
		if speculative {
			b = append(b, "? "...)
		}
		b = appendHex16(b, ip)
		b = append(b, '\n')
	}
	l.buf = b
	l.w.Write(b)
}

func (l *flowLister) handleEvent(ev *Event) int {
	off := l.offset()
	var st int
	if l.blk != nil {
		st = l.blk.eventNext(ev)
	} else {
		st = l.insn.event(ev)
	}
	if st < 0 {
		return st
	}
	l.time = ev.TSC
	if !l.o.Quiet && !ev.StatusUpdate {
		l.printEvent(ev, off)
	}
	return st
}

func (l *flowLister) drain(st int) int {
	var ev Event
	for st >= 0 && st&stEventPending != 0 {
		st = l.handleEvent(&ev)
	}
	return st
}

func (l *flowLister) printDisabledLine() {
	if l.o.JSON {
		l.w.WriteString("{\"type\":\"event\",\"event\":\"disabled\"}\n")
	} else {
		l.w.WriteString("[disabled]\n")
	}
}

func (l *flowLister) printEOT() {
	if l.o.JSON {
		l.w.WriteString("{\"type\":\"end\"}\n")
	} else {
		l.w.WriteString("[end of trace]\n")
	}
}

func (l *flowLister) runInsn() {
	d := l.insn
	var sync int64
	var in Insn
	for {
		in = Insn{}
		st := d.syncForward()
		if st < 0 {
			if st == eEOS {
				return
			}
			l.diagnose(in.IP, "sync error", st)
			ns := d.Offset()
			if ns <= sync {
				return
			}
			sync = ns
			continue
		}
		for {
			for {
				if st = l.drain(st); st < 0 {
					break
				}
				if st&stEOS != 0 {
					if st&stIPSuppressed == 0 && !l.o.Quiet {
						l.printEOT()
					}
					st = eEOS
					break
				}
				off := d.Offset()
				st = d.next(&in)
				if st < 0 {
					if st == eEventIgnored {
						st = stEventPending
						continue
					}
					if in.Size == 0 {
						break
					}
				}
				if !l.o.Quiet {
					l.line(in.IP, in.Speculative, off)
				}
				l.stats.Insns++
				if l.stats.Insns&0xffff == 0 && l.o.Progress != nil {
					l.o.Progress(off)
				}
				if st < 0 {
					break
				}
			}
			if st == eEOS {
				return
			}
			ip := in.IP
			if st != eBadQuery && in.Size != 0 {
				ip, _ = l.nextIP(in.IP, in.Mode)
			}
			l.diagnose(ip, "error", st)
			if !l.o.ResyncOnError || !l.progress() {
				break
			}
			if st = l.resync(); st < 0 {
				ip := in.IP
				if st != eBadQuery && in.Size != 0 {
					ip, _ = l.nextIP(in.IP, in.Mode)
				}
				l.diagnose(ip, "resync error", st)
				break
			}
		}
	}
}

func (l *flowLister) resync() int {
	var ev Event
	var st int
	for {
		if l.blk != nil {
			st = l.blk.resync()
		} else {
			st = l.insn.resync()
		}
		if st >= 0 {
			break
		}
		if st != eEventIgnored {
			return st
		}
		if st = l.handleEvent(&ev); st < 0 {
			return st
		}
	}
	if st&stIPSuppressed != 0 && !l.o.Quiet {
		l.printDisabledLine()
	}
	return st
}

func (l *flowLister) runBlock() {
	d := l.blk
	var sync int64
	var blk Block
	for {
		blk = Block{}
		st := d.syncForward()
		if st < 0 {
			if st == eEOS {
				return
			}
			l.diagnoseBlock("sync error", st, &blk)
			ns := d.Offset()
			if ns <= sync {
				return
			}
			sync = ns
			continue
		}
		for {
			for {
				if st = l.drain(st); st < 0 {
					break
				}
				if st&stEOS != 0 {
					if st&stIPSuppressed == 0 && !l.o.Quiet {
						l.printEOT()
					}
					st = eEOS
					break
				}
				off := d.Offset()
				st = d.next(&blk)
				l.stats.Insns += uint64(blk.NInsn)
				l.stats.Blocks++
				if l.stats.Blocks&0xffff == 0 && l.o.Progress != nil {
					l.o.Progress(off)
				}
				if !l.o.Quiet {
					l.printBlock(&blk, off)
				}
				if st < 0 {
					break
				}
			}
			if st == eEOS {
				return
			}
			l.diagnoseBlock("error", st, &blk)
			if !l.o.ResyncOnError || !l.progress() {
				break
			}
			if st = l.resync(); st < 0 {
				l.diagnoseBlock("resync error", st, &blk)
				break
			}
		}
	}
}

func (l *flowLister) diagnoseBlock(what string, code int, blk *Block) {
	ip := blk.IP
	if blk.NInsn != 0 {
		ip = blk.EndIP
		if code != eBadQuery {
			if blk.Truncated {
				var e insnEntry
				if classify(blk.Raw[:blk.Size], blk.Mode, &e) == 0 {
					ip += uint64(e.size)
					if e.direct() {
						ip += uint64(int64(e.disp))
					}
				}
			} else {
				ip, _ = l.nextIP(ip, blk.Mode)
			}
		}
	}
	l.diagnose(ip, what, code)
}

func (l *flowLister) printBlock(blk *Block, off int64) {
	if l.o.ShowBlocks {
		if l.o.JSON {
			b := append(l.buf[:0], `{"type":"block","ip":"0x`...)
			b = appendHex(b, blk.IP)
			b = append(b, `","end_ip":"0x`...)
			b = appendHex(b, blk.EndIP)
			b = append(b, `","ninsn":`...)
			b = strconv.AppendInt(b, int64(blk.NInsn), 10)
			b = append(b, `,"class":"`...)
			b = append(b, blk.Class.String()...)
			b = append(b, "\"}\n"...)
			l.buf = b
			l.w.Write(b)
		} else {
			l.w.WriteString("[block")
			if l.o.Stat || l.o.StatInsn || l.o.StatBlocks {
				l.w.WriteString(" ")
				l.w.WriteString(strconv.FormatUint(l.stats.Blocks, 16))
			}
			l.w.WriteString("]\n")
		}
	}
	n := blk.NInsn
	if n == 0 {
		return
	}
	ip := blk.IP
	for {
		l.line(ip, blk.Speculative, off)
		n--
		if n == 0 {
			break
		}
		next, ok := l.nextIP(ip, blk.Mode)
		if !ok {
			l.diagnose(ip, "reconstruct error", eBadInsn)
			break
		}
		ip = next
	}
	if ip != blk.EndIP {
		l.diagnose(ip, "reconstruct error", eNoSync)
	}
}

func (l *flowLister) printEvent(ev *Event, off int64) {
	if l.o.JSON {
		l.printEventJSON(ev)
		return
	}
	b := append(l.buf[:0], '[')
	if l.o.Offset {
		b = appendHex16(b, uint64(off))
		b = append(b, "  "...)
	}
	if l.o.EventTime && ev.HasTSC {
		b = appendHex16(b, ev.TSC)
		b = append(b, "  "...)
	}
	ipOpt := func(b []byte, name string) []byte {
		if l.o.EventIP && !ev.IPSuppressed {
			b = append(b, name...)
			b = appendHex16(b, ev.IP)
		}
		return b
	}
	const ipS = ", ip: "
	switch ev.Type {
	case EvEnabled:
		if ev.Resumed {
			b = append(b, "resumed"...)
		} else {
			b = append(b, "enabled"...)
		}
		if l.o.EventIP {
			b = append(b, ipS...)
			b = appendHex16(b, ev.IP)
		}
	case EvDisabled:
		b = append(b, "disabled"...)
		b = ipOpt(b, ipS)
	case EvAsyncDisabled:
		b = append(b, "disabled"...)
		if l.o.EventIP {
			b = append(b, ", at: "...)
			b = appendHex16(b, ev.At)
			b = ipOpt(b, ipS)
		}
	case EvAsyncBranch:
		b = append(b, "interrupt"...)
		if l.o.EventIP {
			b = append(b, ", from: "...)
			b = appendHex16(b, ev.At)
			b = ipOpt(b, ", to: ")
		}
	case EvPaging, EvAsyncPaging:
		b = append(b, "paging, cr3: "...)
		b = appendHex16(b, ev.CR3)
		if ev.NonRoot {
			b = append(b, ", nr"...)
		}
		if ev.Type == EvAsyncPaging && l.o.EventIP {
			b = append(b, ipS...)
			b = appendHex16(b, ev.IP)
		}
	case EvOverflow:
		b = append(b, "overflow"...)
		b = ipOpt(b, ipS)
	case EvExecMode:
		b = append(b, "exec mode: "...)
		b = append(b, ev.Mode.String()...)
		b = ipOpt(b, ipS)
	case EvTSX:
		switch {
		case ev.Aborted:
			b = append(b, "aborted"...)
		case ev.Speculative:
			b = append(b, "begin transaction"...)
		default:
			b = append(b, "committed"...)
		}
		b = ipOpt(b, ipS)
	case EvStop:
		b = append(b, "stopped"...)
	case EvVMCS, EvAsyncVMCS:
		b = append(b, "vmcs, base: "...)
		b = appendHex16(b, ev.Base)
		if ev.Type == EvAsyncVMCS && l.o.EventIP {
			b = append(b, ipS...)
			b = appendHex16(b, ev.IP)
		}
	case EvExStop:
		b = append(b, "exstop"...)
		b = ipOpt(b, ipS)
	case EvMWait:
		b = append(b, "mwait "...)
		b = appendHex(b, uint64(ev.Hints))
		b = append(b, ' ')
		b = appendHex(b, uint64(ev.Ext))
		b = ipOpt(b, ipS)
	case EvPwrE:
		b = append(b, "pwre c"...)
		b = strconv.AppendUint(b, uint64((ev.State+1)&0xf), 10)
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64((ev.Sub+1)&0xf), 10)
		if ev.HW {
			b = append(b, " hw"...)
		}
	case EvPwrX:
		b = append(b, "pwrx "...)
		if ev.Interrupt {
			b = append(b, "int: "...)
		}
		if ev.Store {
			b = append(b, "st: "...)
		}
		if ev.Autonomous {
			b = append(b, "hw: "...)
		}
		b = append(b, 'c')
		b = strconv.AppendUint(b, uint64((ev.State+1)&0xf), 10)
		b = append(b, " (c"...)
		b = strconv.AppendUint(b, uint64((ev.Sub+1)&0xf), 10)
		b = append(b, ')')
	case EvPTWrite:
		b = append(b, "ptwrite: "...)
		b = appendHex(b, ev.Payload)
		b = ipOpt(b, ipS)
	case EvTick:
		b = append(b, "tick"...)
		b = ipOpt(b, ipS)
	case EvCBR:
		b = append(b, "cbr: "...)
		b = appendHex(b, uint64(ev.Ratio))
	case EvMNT:
		b = append(b, "mnt: "...)
		b = appendHex(b, ev.Payload)
	case EvTIP:
		b = append(b, "tip: "...)
		b = appendHex(b, ev.IP)
	case EvTNT:
		b = append(b, "tnt: "...)
		for i := ev.Size; i > 0; i-- {
			if ev.Payload>>(i-1)&1 != 0 {
				b = append(b, '!')
			} else {
				b = append(b, '.')
			}
		}
	case EvIFlags:
		b = append(b, "interrupts "...)
		if ev.IFlag {
			b = append(b, "enabled"...)
		} else {
			b = append(b, "disabled"...)
		}
		b = ipOpt(b, ipS)
	case EvInterrupt:
		b = append(b, "interrupt "...)
		b = strconv.AppendUint(b, uint64(ev.Vector), 10)
		if ev.HasCR2 {
			b = append(b, ", cr2: "...)
			b = appendHex16(b, ev.CR2)
		}
		b = ipOpt(b, ipS)
	case EvIret, EvSMI, EvRSM, EvInit, EvVMEntry, EvShutdown, EvUIret, EvSyscall:
		b = append(b, simpleEventName[ev.Type]...)
		b = ipOpt(b, ipS)
	case EvSIPI:
		b = append(b, "sipi: "...)
		b = appendHex(b, uint64(ev.Vector))
	case EvVMExit:
		b = append(b, "vmexit"...)
		if ev.HasVector {
			b = append(b, ", intr: "...)
			b = strconv.AppendUint(b, uint64(ev.Vector), 10)
		}
		if ev.HasVMXR {
			b = append(b, ", vmxr: "...)
			b = appendHex16(b, ev.VMXR)
		}
		if ev.HasVMXQ {
			b = append(b, ", vmxq: "...)
			b = appendHex16(b, ev.VMXQ)
		}
		b = ipOpt(b, ipS)
	case EvUIntr, EvSwIntr:
		if ev.Type == EvUIntr {
			b = append(b, "uintr "...)
		} else {
			b = append(b, "swintr "...)
		}
		b = strconv.AppendUint(b, uint64(ev.Vector), 10)
		b = ipOpt(b, ipS)
	case EvTrig:
		b = append(b, "trig "...)
		if ev.TRBV < 0x10 {
			b = append(b, '0')
		}
		b = appendHex(b, uint64(ev.TRBV))
		if ev.Mult {
			b = append(b, ", mult"...)
		}
		b = ipOpt(b, ipS)
		if ev.ICnt != 0 {
			b = append(b, ", icnt: "...)
			b = strconv.AppendUint(b, uint64(ev.ICnt), 10)
		}
	}
	b = append(b, "]\n"...)
	l.buf = b
	l.w.Write(b)
}

var simpleEventName = map[EventType]string{
	EvIret: "iret", EvSMI: "smi", EvRSM: "rsm", EvInit: "init", EvVMEntry: "vmentry",
	EvShutdown: "shutdown", EvUIret: "uiret", EvSyscall: "syscall",
}

func (l *flowLister) printEventJSON(ev *Event) {
	b := append(l.buf[:0], `{"type":"event","event":"`...)
	b = append(b, ev.Type.String()...)
	b = append(b, '"')
	if !ev.IPSuppressed {
		b = append(b, `,"ip":"0x`...)
		b = appendHex(b, ev.IP)
		b = append(b, '"')
	}
	if ev.Type == EvAsyncBranch || ev.Type == EvAsyncDisabled {
		b = append(b, `,"at":"0x`...)
		b = appendHex(b, ev.At)
		b = append(b, '"')
	}
	if ev.HasTSC {
		b = append(b, `,"tsc":`...)
		b = strconv.AppendUint(b, ev.TSC, 10)
	}
	switch ev.Type {
	case EvExecMode:
		b = append(b, `,"mode":"`...)
		b = append(b, ev.Mode.String()...)
		b = append(b, '"')
	case EvPaging, EvAsyncPaging:
		b = append(b, `,"cr3":"0x`...)
		b = appendHex(b, ev.CR3)
		b = append(b, '"')
	case EvVMCS, EvAsyncVMCS:
		b = append(b, `,"base":"0x`...)
		b = appendHex(b, ev.Base)
		b = append(b, '"')
	case EvPTWrite, EvMNT:
		b = append(b, `,"payload":"0x`...)
		b = appendHex(b, ev.Payload)
		b = append(b, '"')
	case EvCBR:
		b = append(b, `,"cbr":`...)
		b = strconv.AppendUint(b, uint64(ev.Ratio), 10)
	case EvInterrupt, EvUIntr, EvSwIntr, EvSIPI, EvVMExit:
		b = append(b, `,"vector":`...)
		b = strconv.AppendUint(b, uint64(ev.Vector), 10)
	case EvTSX:
		b = append(b, `,"speculative":`...)
		b = strconv.AppendBool(b, ev.Speculative)
		b = append(b, `,"aborted":`...)
		b = strconv.AppendBool(b, ev.Aborted)
	}
	b = append(b, "}\n"...)
	l.buf = b
	l.w.Write(b)
}
