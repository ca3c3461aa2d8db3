package intelpt

import (
	"bufio"
	"io"
	"strconv"

	"github.com/iotap/iotap/internal/ndjson"
)

// Record kinds of 'iotap pt flow --json' (docs/ndjson.md).
const (
	NDJSONInsn      = "pt_insn"       // an executed instruction
	NDJSONBlock     = "pt_block"      // a block of instructions (--block:show-blocks)
	NDJSONEvent     = "pt_event"      // an event of the trace (enabled, paging, overflow...)
	NDJSONFlowError = "pt_flow_error" // a decoding error (ptxed's [offset, ip: what: error])
	NDJSONTraceEnd  = "pt_trace_end"  // the end of the trace, where ptxed prints [end of trace]
	NDJSONFlowStats = "pt_flow_stats" // the counts of --stat
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
	JSON          bool // NDJSON (docs/ndjson.md): a record per instruction, block, event and error
	// StreamName and StreamCPU name the stream on the JSON records
	// ("stream", "cpu") as DumpOptions' do: a perf.data stream's name and
	// CPU (-1: null); "" leaves both out (a raw trace).
	StreamName string
	StreamCPU  int32
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
			b := l.begin(NDJSONFlowStats)
			if insn {
				b = ndjson.Uint(b, "insns", l.stats.Insns)
			}
			if blocks {
				b = ndjson.Uint(b, "blocks", l.stats.Blocks)
			}
			l.end(b)
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

// begin starts a JSON record of kind in l.buf, with the stream's name.
func (l *flowLister) begin(kind string) []byte {
	b := ndjson.Begin(l.buf[:0], kind)
	if l.o.StreamName != "" {
		b = ndjson.Str(b, "stream", l.o.StreamName)
		if l.o.StreamCPU < 0 {
			b = ndjson.Null(b, "cpu")
		} else {
			b = ndjson.Int(b, "cpu", int64(l.o.StreamCPU))
		}
	}
	return b
}

// end ends the JSON record b and writes it.
func (l *flowLister) end(b []byte) {
	l.buf = ndjson.End(b)
	l.w.Write(l.buf)
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
		b = l.begin(NDJSONFlowError)
		b = ndjson.Uint(b, "offset", pos)
		b = ndjson.HexUint(b, "ip", ip)
		b = ndjson.Str(b, "what", what)
		b = ndjson.Str(b, "error", errStr(code))
		l.end(b)
		return
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
		b = l.begin(NDJSONInsn)
		b = ndjson.HexUint(b, "ip", ip)
		b = ndjson.Bool(b, "speculative", speculative)
		if l.o.Time {
			b = ndjson.Uint(b, "tsc", l.time)
		}
		l.end(b)
		return
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
		b := l.begin(NDJSONEvent)
		b = ndjson.Str(b, "event", "disabled")
		b = ndjson.Null(b, "ip")
		b = ndjson.Null(b, "tsc")
		l.end(b)
	} else {
		l.w.WriteString("[disabled]\n")
	}
}

func (l *flowLister) printEOT() {
	if l.o.JSON {
		l.end(l.begin(NDJSONTraceEnd))
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
			b := l.begin(NDJSONBlock)
			b = ndjson.HexUint(b, "ip", blk.IP)
			b = ndjson.HexUint(b, "end_ip", blk.EndIP)
			b = ndjson.Int(b, "insns", int64(blk.NInsn))
			b = ndjson.Str(b, "class", blk.Class.String())
			b = ndjson.Bool(b, "speculative", blk.Speculative)
			l.end(b)
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
	b := l.begin(NDJSONEvent)
	b = ndjson.Str(b, "event", ev.Type.String())
	if !ev.IPSuppressed {
		b = ndjson.HexUint(b, "ip", ev.IP)
	} else {
		b = ndjson.Null(b, "ip")
	}
	if ev.HasTSC {
		b = ndjson.Uint(b, "tsc", ev.TSC)
	} else {
		b = ndjson.Null(b, "tsc")
	}
	switch ev.Type {
	case EvAsyncBranch, EvAsyncDisabled:
		b = ndjson.HexUint(b, "at", ev.At)
	case EvExecMode:
		b = ndjson.Str(b, "mode", ev.Mode.String())
	case EvPaging, EvAsyncPaging:
		b = ndjson.HexUint(b, "cr3", ev.CR3)
	case EvVMCS, EvAsyncVMCS:
		b = ndjson.HexUint(b, "base", ev.Base)
	case EvPTWrite, EvMNT:
		b = ndjson.HexUint(b, "payload", ev.Payload)
	case EvCBR:
		b = ndjson.Uint(b, "ratio", uint64(ev.Ratio))
	case EvInterrupt, EvUIntr, EvSwIntr, EvSIPI, EvVMExit:
		b = ndjson.Uint(b, "vector", uint64(ev.Vector))
	case EvTSX:
		b = ndjson.Bool(b, "speculative", ev.Speculative)
		b = ndjson.Bool(b, "aborted", ev.Aborted)
	}
	l.end(b)
}
