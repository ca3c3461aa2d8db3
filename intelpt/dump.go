package intelpt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// DumpOptions select what Dump prints. They mirror libipt ptdump's options.
type DumpOptions struct {
	NoOffset      bool // don't print the offset column (--no-offset)
	Raw           bool // print the raw packet bytes (--raw)
	LastIP        bool // track and print the last IP on IP packets (--lastip)
	ExecMode      bool // print the execution mode on mode.exec (--exec-mode)
	NoPad         bool // hide PAD packets (--no-pad)
	NoSync        bool // start decoding at offset 0 instead of the first PSB (--no-sync)
	NoTiming      bool // hide timing packets (--no-timing)
	NoCyc         bool // hide CYC packets and ignore them for time (--no-cyc)
	Quiet         bool // print only errors (--quiet)
	Time          bool // print the estimated TSC on timing packets (--time)
	TCal          bool // print the time calibration (--tcal)
	TimeDelta     bool // print time as a delta to the previous value (--time-delta)
	NoTCal        bool // don't calibrate (--no-tcal)
	NoWallClock   bool // relative time without a TSC, no error (--no-wall-clock)
	KeepTCalOnOvf bool // keep the calibration across OVF (--keep-tcal-on-ovf)
	// CPU, when set, selects errata workarounds (--cpu f/m[/s]).
	CPU *CPU
	// Blocks decodes the block packets BBP, BIP and BEP, which libipt's
	// ptdump reports as unknown opcodes (the default, for identical output).
	Blocks bool
	// StreamName and StreamCPU name the stream on DumpJSON's records
	// ("stream", "cpu"): a perf.data stream's InputStream.Name ("cpu N",
	// "tid N") and CPU (-1: null). StreamName "" leaves both out (a raw
	// trace, which the stream's "input" record names).
	StreamName string
	StreamCPU  int32
}

// DumpResult counts what Dump saw.
type DumpResult struct {
	Packets     int64 // packets decoded
	Errors      int64 // decoding errors (each followed by a resync)
	SkippedTail int64 // bytes at the end not decoded (truncated packet or no PSB after an error)
	Truncated   bool  // the trace ends inside a packet
	// Skipped counts the bytes not listed: before the first PSB, from
	// each decoding error to the next PSB, the tail. With Errors, it is
	// loss ('iotap pt dump' exits 3); FirstError is the offset of the
	// first error.
	Skipped, FirstError int64
	// Overflows counts the OVF packets: the CPU dropped trace data there
	// (loss, as 'iotap pt stats' counts it).
	Overflows int64
}

// Loss describes what the listing lacks ("" when nothing): the decoding
// errors, the first one's offset and the bytes they skipped; the
// overflows.
func (r *DumpResult) Loss() string {
	l := decodeLoss(r.Errors, r.FirstError, r.Skipped)
	if r.Overflows > 0 {
		if l != "" {
			l += ", "
		}
		l += fmt.Sprintf("%d overflow(s)", r.Overflows)
	}
	return l
}

func decodeLoss(errs, first, skipped int64) string {
	if errs == 0 {
		return ""
	}
	return fmt.Sprintf("%d decoding error(s) (first at %#x), %d bytes skipped", errs, first, skipped)
}

// error counts a decoding error at off.
func (r *DumpResult) error(off int64) {
	if r.Errors == 0 {
		r.FirstError = off
	}
	r.Errors++
}

// Dump decodes buf and writes a listing in the format of libipt's ptdump to
// w. Decoding errors are printed in the listing as ptdump does
// ("[offset: error decoding packet: ...]") and counted; the returned error
// is only for write failures.
func Dump(w io.Writer, buf []byte, cfg Config, opt DumpOptions) (DumpResult, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	dp := dumper{w: bw, opt: &opt, cfg: cfg}
	dp.cfg.IgnoreBlocks = !opt.Blocks
	if opt.CPU != nil {
		e, ok := ErrataFor(*opt.CPU)
		dp.cfg.Errata = e
		if !ok {
			dp.diag("failed to determine errata", 0, tBadCPU)
		}
	}
	dp.reset()
	d := NewDecoder(buf, dp.cfg)
	dp.run(sliceSource{d}, int64(len(buf)))
	err := bw.Flush()
	return dp.res, err
}

// DumpReader is Dump over a stream: the trace is read through a window of
// window bytes (0: 1 MiB), so its size does not matter.
func DumpReader(w io.Writer, r io.Reader, window int, cfg Config, opt DumpOptions) (DumpResult, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	dp := dumper{w: bw, opt: &opt, cfg: cfg}
	dp.cfg.IgnoreBlocks = !opt.Blocks
	if opt.CPU != nil {
		e, ok := ErrataFor(*opt.CPU)
		dp.cfg.Errata = e
		if !ok {
			dp.diag("failed to determine errata", 0, tBadCPU)
		}
	}
	dp.reset()
	var s *StreamDecoder
	if window > 0 && window < 4096 {
		s = newStreamDecoder(r, dp.cfg, window)
	} else {
		s = NewStreamDecoder(r, dp.cfg, window)
	}
	dp.run(streamSource{s}, -1)
	if err := bw.Flush(); err != nil {
		return dp.res, err
	}
	return dp.res, s.Err()
}

// packetSource is what the dumper decodes from.
type packetSource interface {
	Next(*Packet) error
	Offset() int64
	SyncForward() error
	start()                      // synchronise at offset 0 (--no-sync)
	raw(off int64, n int) []byte // bytes of the packet at off
	end() int64                  // stream size so far
}

type sliceSource struct{ *Decoder }

func (s sliceSource) start() { s.SetOffset(0) }
func (s sliceSource) raw(off int64, n int) []byte {
	end := min(off+int64(n), int64(len(s.buf)))
	return s.buf[off:end]
}
func (s sliceSource) end() int64 { return int64(len(s.buf)) }

type streamSource struct{ *StreamDecoder }

func (s streamSource) start() { s.startHere() }
func (s streamSource) raw(off int64, n int) []byte {
	return s.Bytes(off, min(n, int(s.base+int64(len(s.d.buf))-off)))
}
func (s streamSource) end() int64 { return s.base + int64(len(s.d.buf)) }

type dumper struct {
	w   *bufio.Writer
	opt *DumpOptions
	cfg Config
	res DumpResult

	lastIP   LastIP
	tcal     tcal
	time     ptTime
	tsc, fcr uint64
	inHeader bool

	// The line being built.
	line                 []byte
	opcode, std, id, tp  []byte
	ext                  bool
	skip, skipT, skipCal bool
}

func (dp *dumper) reset() {
	dp.lastIP = LastIP{}
	dp.tcal = newTCal()
	dp.time = ptTime{}
	dp.tsc, dp.fcr, dp.inHeader = 0, 0, false
}

func (dp *dumper) diag(msg string, off uint64, c tcode) {
	b := dp.line[:0]
	b = append(b, '[')
	b = strconv.AppendUint(b, off, 16)
	b = append(b, ": "...)
	b = append(b, msg...)
	if c != tOK {
		b = append(b, ": "...)
		b = append(b, c.String()...)
	}
	b = append(b, "]\n"...)
	dp.w.Write(b)
	dp.line = b[:0]
}

func (dp *dumper) run(d packetSource, size int64) {
	if dp.opt.NoSync {
		d.start()
	} else if d.SyncForward() != nil {
		dp.res.Skipped = d.end()
		return
	}
	dp.res.Skipped = d.Offset()
	track := dp.opt.Time || dp.opt.TCal
	var p Packet
	for {
		off := d.Offset()
		err := d.Next(&p)
		if err == nil {
			dp.res.Packets++
			dp.packet(uint64(off), &p, d, track)
			continue
		}
		if err == io.EOF {
			return
		}
		if errors.Is(err, ErrTruncated) {
			dp.res.Truncated = true
			dp.res.SkippedTail = d.end() - off
			dp.res.Skipped += dp.res.SkippedTail
			return
		}
		c := tBadPacket
		if errors.Is(err, ErrBadOpcode) {
			c = tBadOpcode
		}
		dp.res.error(off)
		dp.diag("error decoding packet", uint64(off), c)
		if d.SyncForward() != nil {
			dp.res.SkippedTail = d.end() - off
			dp.res.Skipped += dp.res.SkippedTail
			return
		}
		dp.res.Skipped += max(d.Offset()-off, 0) // a PSB may start inside the bad packet
		dp.reset()
	}
}

func (dp *dumper) packet(off uint64, p *Packet, src packetSource, track bool) {
	dp.opcode, dp.std, dp.id, dp.tp = dp.opcode[:0], dp.std[:0], dp.id[:0], dp.tp[:0]
	dp.ext, dp.skip, dp.skipT, dp.skipCal = false, false, false, false
	opt := dp.opt
	dp.opcode = append(dp.opcode, p.Kind.String()...)
	switch p.Kind {
	case KindPSB:
		if track {
			dp.tcal.updatePSB(&dp.cfg)
		}
		dp.inHeader = true
	case KindPSBEnd:
		dp.inHeader = false
	case KindPad:
		dp.skip = opt.NoPad
	case KindOVF:
		dp.res.Overflows++
		if track {
			if opt.KeepTCalOnOvf {
				dp.tcal.updateOVF()
			} else {
				dp.tcal = newTCal()
			}
		}
	case KindFUP, KindTIP, KindTIPPGE, KindTIPPGD:
		dp.ipPayload(p)
		if opt.LastIP {
			dp.id = append(dp.id, "ip"...)
			if err := dp.lastIP.Update(p.IPC, p.Payload); err != nil {
				dp.tp = append(dp.tp, "<unavailable>"...)
				dp.diag("error tracking last-ip", off, tBadPacket)
			} else if !dp.lastIP.Have {
				dp.tp = append(dp.tp, "<unavailable>"...)
				dp.diag("error tracking last-ip", off, tNoIP)
			} else if dp.lastIP.Suppressed {
				dp.tp = append(dp.tp, "<suppressed>"...)
			} else {
				dp.tp = hex16(dp.tp, dp.lastIP.IP)
			}
		}
	case KindPIP:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		if p.Flags&FlagNR != 0 {
			dp.std = append(dp.std, ", nr"...)
		}
		dp.id = append(dp.id, "cr3"...)
		dp.tp = hex16(dp.tp, p.Payload)
	case KindVMCS:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		dp.id = append(dp.id, "vmcs"...)
		dp.tp = hex16(dp.tp, p.Payload)
	case KindTNT8, KindTNT64:
		dp.ext = true
		for i := int(p.Bits) - 1; i >= 0; i-- {
			if p.Payload>>uint(i)&1 != 0 {
				dp.std = append(dp.std, '!')
			} else {
				dp.std = append(dp.std, '.')
			}
		}
	case KindModeExec:
		dp.std = appendList(dp.std, p.Flags&FlagCSD != 0, "cs.d", p.Flags&FlagCSL != 0, "cs.l", p.Flags&FlagIF != 0, "if")
		if opt.ExecMode {
			dp.id = append(dp.id, "em"...)
			dp.tp = append(dp.tp, execMode(p.Flags)...)
		}
	case KindModeTSX:
		dp.std = appendList(dp.std, p.Flags&FlagInTX != 0, "intx", p.Flags&FlagAbort != 0, "abrt", false, "")
	case KindTSC:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		if track {
			dp.trackTSC(off, p.Payload)
		}
		dp.skip = opt.NoTiming
	case KindCBR:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		if track {
			dp.trackCBR(off, uint8(p.Payload))
		}
		dp.skip = opt.NoTiming
	case KindTMA:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		dp.std = append(dp.std, ", "...)
		dp.std = strconv.AppendUint(dp.std, uint64(p.Aux), 16)
		if track {
			dp.trackTMA(off, p)
		}
		dp.skip = opt.NoTiming
	case KindMTC:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		if track {
			dp.trackMTC(off, uint8(p.Payload))
		}
		dp.skip = opt.NoTiming
	case KindCYC:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		if track && !opt.NoCyc {
			dp.trackCyc(off, p.Payload)
		}
		dp.skip = opt.NoTiming || opt.NoCyc
	case KindMNT:
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
	case KindExStop:
		if p.Flags&FlagIP != 0 {
			dp.std = append(dp.std, "ip"...)
		}
	case KindMWait:
		dp.std = hexN(dp.std, p.Payload, 8)
		dp.std = append(dp.std, ", "...)
		dp.std = hexN(dp.std, uint64(p.Aux), 8)
	case KindPwrE:
		dp.std = cstate(dp.std, p.Type, p.Sub)
		if p.Flags&FlagHW != 0 {
			dp.std = append(dp.std, ", hw"...)
		}
	case KindPwrX:
		var wr string
		switch p.Flags & (FlagInterrupt | FlagStore | FlagAutonomous) {
		case FlagInterrupt:
			wr = "int"
		case FlagStore:
			wr = " st"
		case FlagAutonomous:
			wr = " hw"
		default:
			wr = "bad"
		}
		dp.std = append(dp.std, wr...)
		dp.std = append(dp.std, ": c"...)
		dp.std = strconv.AppendUint(dp.std, uint64((p.Type+1)&0xf), 10)
		dp.std = append(dp.std, ", c"...)
		dp.std = strconv.AppendUint(dp.std, uint64((p.Sub+1)&0xf), 10)
	case KindPTW:
		dp.std = strconv.AppendUint(dp.std, uint64(p.Bits), 16)
		dp.std = append(dp.std, ": "...)
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		if p.Flags&FlagIP != 0 {
			dp.std = append(dp.std, ", ip"...)
		}
	case KindCFE:
		dp.id = append(dp.id, "type"...)
		dp.tp = append(dp.tp, CFETypeName(p.Type)...)
		dp.std = strconv.AppendUint(dp.std, uint64(p.Type), 10)
		switch p.Type {
		case 1, 9, 12, 14: // intr, vmexit_intr, uintr, swintr: decimal vector
			dp.std = append(dp.std, ": "...)
			dp.std = strconv.AppendUint(dp.std, uint64(p.Aux), 10)
		case 5: // sipi: hex vector
			dp.std = append(dp.std, ": "...)
			dp.std = strconv.AppendUint(dp.std, uint64(p.Aux), 16)
		}
		if p.Flags&FlagIP != 0 {
			dp.std = append(dp.std, ", ip"...)
		}
	case KindEVD:
		dp.std = strconv.AppendUint(dp.std, uint64(p.Type), 10)
		dp.std = append(dp.std, ": "...)
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
		dp.id = append(dp.id, "type"...)
		dp.tp = append(dp.tp, EVDTypeName(p.Type)...)
	case KindTrig:
		dp.ext = true
		dp.std = hexN(dp.std, uint64(p.Type), 2)
		if p.Flags&FlagIP != 0 {
			dp.std = append(dp.std, ", ip"...)
		}
		if p.Flags&FlagMult != 0 {
			dp.std = append(dp.std, ", mult"...)
		}
		if p.Flags&FlagICNTValid != 0 {
			dp.std = append(dp.std, ", icnt: "...)
			dp.std = strconv.AppendUint(dp.std, uint64(p.Aux), 10)
		}
	case KindBBP:
		dp.std = strconv.AppendUint(dp.std, uint64(p.Type), 16)
		if p.Flags&FlagBlock4 != 0 {
			dp.std = append(dp.std, ", sz4"...)
		} else {
			dp.std = append(dp.std, ", sz8"...)
		}
	case KindBIP:
		dp.ext = true
		dp.std = strconv.AppendUint(dp.std, uint64(p.Type), 16)
		dp.std = append(dp.std, ": "...)
		dp.std = strconv.AppendUint(dp.std, p.Payload, 16)
	case KindBEP:
		if p.Flags&FlagIP != 0 {
			dp.std = append(dp.std, "ip"...)
		}
	}
	dp.emit(off, p, src)
}

func (dp *dumper) ipPayload(p *Packet) {
	b := append(dp.std, byte('0'+p.IPC), ':', ' ')
	switch p.IPC {
	case IPCSuppressed:
		b = append(b, "????????????????"...)
	case IPCUpdate16:
		b = append(b, "????????????"...)
		b = hexN(b, p.Payload, 4)
	case IPCUpdate32:
		b = append(b, "????????"...)
		b = hexN(b, p.Payload, 8)
	case IPCUpdate48:
		b = append(b, "????"...)
		b = hexN(b, p.Payload, 12)
	case IPCSext48:
		b = hex16(b, sext48(p.Payload))
	default:
		b = hex16(b, p.Payload)
	}
	dp.std = b
}

// emit prints the line like ptdump: columns padded to ptdump's field sizes,
// fields truncated to them.
func (dp *dumper) emit(off uint64, p *Packet, src packetSource) {
	if dp.skip || dp.opt.Quiet {
		return
	}
	b := dp.line[:0]
	sep := false
	if !dp.opt.NoOffset {
		b = hex16(b, off)
		b = append(b, ' ')
		sep = true
	}
	if dp.opt.Raw {
		if sep {
			b = append(b, ' ')
		}
		start := len(b)
		for _, x := range src.raw(int64(off), int(p.Size)) {
			if len(b)-start >= 32 {
				break
			}
			b = append(b, hexDigits[x>>4], hexDigits[x&0xf])
		}
		b = pad(b, start, 33)
		sep = true
	}
	if sep {
		b = append(b, ' ')
	}
	std := trunc(dp.std, 24)
	if dp.ext {
		std = trunc(dp.std, 47)
	}
	start := len(b)
	b = append(b, trunc(dp.opcode, 9)...)
	if len(std) > 0 {
		b = pad(b, start, 10)
	}
	if len(dp.id) > 0 {
		b = append(b, ' ')
		start = len(b)
		b = append(b, std...)
		b = pad(b, start, 25)
		b = append(b, ' ')
		start = len(b)
		b = append(b, trunc(dp.id, 4)...)
		b = pad(b, start, 5)
		b = append(b, trunc(dp.tp, 16)...)
	} else if len(std) > 0 {
		b = append(b, ' ')
		b = append(b, std...)
	}
	b = append(b, '\n')
	dp.w.Write(b)
	dp.line = b[:0]
}

const hexDigits = "0123456789abcdef"

func hexN(b []byte, v uint64, n int) []byte {
	start := len(b)
	b = strconv.AppendUint(b, v, 16)
	if w := len(b) - start; w < n {
		b = append(b, "0000000000000000"[:n-w]...)
		copy(b[start+n-w:], b[start:start+w])
		for i := start; i < start+n-w; i++ {
			b[i] = '0'
		}
	}
	return b
}

func hex16(b []byte, v uint64) []byte {
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hexDigits[v>>uint(i)&0xf])
	}
	return b
}

func pad(b []byte, start, width int) []byte {
	for len(b)-start < width {
		b = append(b, ' ')
	}
	return b
}

func trunc(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func appendList(b []byte, on1 bool, s1 string, on2 bool, s2 string, on3 bool, s3 string) []byte {
	first := true
	for _, it := range [3]struct {
		on bool
		s  string
	}{{on1, s1}, {on2, s2}, {on3, s3}} {
		if !it.on {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		b = append(b, it.s...)
		first = false
	}
	return b
}

func execMode(f Flags) string {
	switch {
	case f&FlagCSL != 0 && f&FlagCSD != 0:
		return "unknown"
	case f&FlagCSL != 0:
		return "64-bit"
	case f&FlagCSD != 0:
		return "32-bit"
	}
	return "16-bit"
}

func cstate(b []byte, state, sub uint8) []byte {
	b = append(b, 'c')
	b = strconv.AppendUint(b, uint64((state+1)&0xf), 10)
	b = append(b, '.')
	return strconv.AppendUint(b, uint64((sub+1)&0xf), 10)
}
