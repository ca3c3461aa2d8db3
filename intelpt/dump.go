package intelpt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
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
	dp := newDumper(w, cfg, &opt)
	dp.run(streamOver(buf, dp.cfg))
	return dp.res, dp.flush()
}

// DumpReader is Dump over a stream: the trace is read through a window of
// window bytes (0: 1 MiB), so its size does not matter.
func DumpReader(w io.Writer, r io.Reader, window int, cfg Config, opt DumpOptions) (DumpResult, error) {
	dp := newDumper(w, cfg, &opt)
	var s *StreamDecoder
	if window > 0 && window < 4096 {
		s = newStreamDecoder(r, dp.cfg, window)
	} else {
		s = NewStreamDecoder(r, dp.cfg, window)
	}
	dp.run(s)
	if err := dp.flush(); err != nil {
		return dp.res, err
	}
	return dp.res, s.Err()
}

// packetSource is what the NDJSON dumper decodes from.
type packetSource interface {
	Next(*Packet) error
	Offset() int64
	SyncForward() error
	start()     // synchronise at offset 0 (--no-sync)
	end() int64 // stream size so far
}

type sliceSource struct{ *Decoder }

func (s sliceSource) start()     { s.SetOffset(0) }
func (s sliceSource) end() int64 { return int64(len(s.buf)) }

type streamSource struct{ *StreamDecoder }

func (s streamSource) start()     { s.startHere() }
func (s streamSource) end() int64 { return s.StreamDecoder.end() }

// The listing is built in out, written to w when it holds dumpFlushAt
// bytes. Lines are formatted in place: the hex and TNT writers store 8
// or 16 bytes at a time past the end of what they keep, so out always
// has dumpSlack bytes of room after dumpFlushAt (a line, with the
// diagnostics met while it was built, is far shorter).
const (
	dumpFlushAt = 256 << 10
	dumpSlack   = 4 << 10
	// lineRoom is the room a line is given before it is built: its
	// columns without their truncation, and the 16-byte stores.
	lineRoom = 512
)

type dumper struct {
	w   io.Writer
	kt  kindTable // kindTab(), copied: one load less per packet
	err error     // the first write error: the listing stops there
	out []byte
	// hand, when set, takes the full buffer instead of w and returns
	// an empty one (DumpFile's segments).
	hand func([]byte) ([]byte, error)
	// stopAt ends the listing at the packet starting there (DumpFile's
	// segment end); a packet or resync that crosses it sets over and
	// the listing goes on. atCut: the decoder starts on a PSB where a
	// listing before ended (no synchronisation, nothing skipped).
	stopAt      int64
	over, atCut bool
	opt         *DumpOptions
	cfg         Config
	res         DumpResult

	lastIP   LastIP
	tcal     tcal
	time     ptTime
	tsc, fcr uint64
	inHeader bool

	// While a line is built (inLine), diagnostics go to pend, to be
	// written before it.
	inLine bool
	pend   []byte
	// The hex text of the offsets' high 32 bits (little-endian), offHi.
	offHi     uint32
	offHiText uint64
	// The columns of the line being built after the payload (ptdump's
	// "identifier" and its value: --lastip, --exec-mode, --time, --tcal,
	// cr3 and vmcs); ext allows the payload the wider column (TNT).
	id, tp               []byte
	ext                  bool
	skip, skipT, skipCal bool
}

func newDumper(w io.Writer, cfg Config, opt *DumpOptions) *dumper {
	return newDumperBuf(w, cfg, opt, make([]byte, 0, dumpFlushAt+dumpSlack))
}

// newDumperBuf is newDumper with the output buffer out (empty, with
// dumpFlushAt+dumpSlack bytes of capacity).
func newDumperBuf(w io.Writer, cfg Config, opt *DumpOptions, out []byte) *dumper {
	dp := &dumper{w: w, kt: *kindTab(), opt: opt, cfg: cfg, out: out, offHiText: hexWord(0), stopAt: math.MaxInt64}
	dp.cfg.IgnoreBlocks = !opt.Blocks
	if opt.CPU != nil {
		e, ok := ErrataFor(*opt.CPU)
		dp.cfg.Errata = e
		if !ok {
			dp.diag("failed to determine errata", 0, tBadCPU)
		}
	}
	dp.reset()
	return dp
}

// flush writes out to w; after a write error it only empties out. It
// returns the first write error.
func (dp *dumper) flush() error {
	if dp.hand != nil && dp.err == nil {
		dp.out, dp.err = dp.hand(dp.out)
		return dp.err
	}
	if dp.err == nil && len(dp.out) > 0 {
		_, dp.err = dp.w.Write(dp.out)
	}
	dp.out = dp.out[:0]
	return dp.err
}

func (dp *dumper) reset() {
	dp.lastIP = LastIP{}
	dp.tcal = newTCal()
	dp.time = ptTime{}
	dp.tsc, dp.fcr, dp.inHeader = 0, 0, false
}

func (dp *dumper) diag(msg string, off uint64, c tcode) {
	b := dp.out
	if dp.inLine {
		b = dp.pend
	}
	b = append(b, '[')
	b = hexVar(b, off)
	b = append(b, ": "...)
	b = append(b, msg...)
	if c != tOK {
		b = append(b, ": "...)
		b = append(b, c.String()...)
	}
	b = append(b, "]\n"...)
	if dp.inLine {
		dp.pend = b
		return
	}
	dp.out = b
	if len(b) >= dumpFlushAt {
		dp.flush()
	}
}

func (dp *dumper) run(d *StreamDecoder) {
	if dp.atCut {
		// positioned by the caller
	} else if dp.opt.NoSync {
		d.startHere()
	} else if d.SyncForward() != nil {
		dp.res.Skipped = d.end()
		return
	} else {
		dp.res.Skipped = d.Offset()
	}
	track := dp.opt.Time || dp.opt.TCal
	var p Packet
	for dp.err == nil {
		off := d.Offset()
		if off >= dp.stopAt {
			if off == dp.stopAt {
				return
			}
			dp.stopAt, dp.over = math.MaxInt64, true
		}
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

// packet formats p's line at the end of out, as ptdump prints it: the
// columns padded to ptdump's field sizes, fields truncated to them. The
// payload is written in place after the opcode column and truncated
// after; what follows it (id, tp) is built aside.
func (dp *dumper) packet(off uint64, p *Packet, src *StreamDecoder, track bool) {
	opt := dp.opt
	b := dp.out
	if cap(b)-len(b) < lineRoom {
		b = slices.Grow(b, lineRoom)
	}
	ls := len(b)
	dp.inLine = true
	dp.id, dp.tp = dp.id[:0], dp.tp[:0]
	dp.ext, dp.skip, dp.skipT, dp.skipCal = false, false, false, false
	sep := false
	if !opt.NoOffset {
		// The offset's high digits change every 4 GiB: kept as text.
		if hi := uint32(off >> 32); hi != dp.offHi {
			dp.offHi, dp.offHiText = hi, hexWord(hi)
		}
		b = b[:ls+17]
		binary.LittleEndian.PutUint64(b[ls:], dp.offHiText)
		binary.LittleEndian.PutUint64(b[ls+8:], hexWord(uint32(off)))
		b[ls+16] = ' '
		sep = true
	}
	if opt.Raw {
		if sep {
			b = append(b, ' ')
		}
		start := len(b)
		for _, x := range src.Bytes(int64(off), min(int(p.Size), int(src.end()-int64(off)))) {
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
	// The opcode column: the name (at most 9 bytes) padded to 10, a
	// space; cut back to the name when no payload follows.
	os := len(b)
	b = b[:os+16]
	binary.LittleEndian.PutUint64(b[os:], dp.kt.cols[p.Kind][0])
	binary.LittleEndian.PutUint64(b[os+8:], dp.kt.cols[p.Kind][1])
	ss := os + opcodeCol
	b = b[:ss]
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
		b = ipPayload(b, p)
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
		b = hexVar(b, p.Payload)
		if p.Flags&FlagNR != 0 {
			b = append(b, ", nr"...)
		}
		dp.id = append(dp.id, "cr3"...)
		dp.tp = hex16(dp.tp, p.Payload)
	case KindVMCS:
		b = hexVar(b, p.Payload)
		dp.id = append(dp.id, "vmcs"...)
		dp.tp = hex16(dp.tp, p.Payload)
	case KindTNT8, KindTNT64:
		dp.ext = true
		if p.Bits <= 8 { // TNT-8: one table entry
			l := len(b)
			binary.LittleEndian.PutUint64(b[l:l+8], tntChars[uint8(p.Payload<<(8-p.Bits))])
			b = b[:l+int(p.Bits)]
		} else {
			b = appendTNT(b, p.Payload, p.Bits)
		}
	case KindModeExec:
		b = appendList(b, p.Flags&FlagCSD != 0, "cs.d", p.Flags&FlagCSL != 0, "cs.l", p.Flags&FlagIF != 0, "if")
		if opt.ExecMode {
			dp.id = append(dp.id, "em"...)
			dp.tp = append(dp.tp, execMode(p.Flags)...)
		}
	case KindModeTSX:
		b = appendList(b, p.Flags&FlagInTX != 0, "intx", p.Flags&FlagAbort != 0, "abrt", false, "")
	case KindTSC:
		b = hexVar(b, p.Payload)
		if track {
			dp.trackTSC(off, p.Payload)
		}
		dp.skip = opt.NoTiming
	case KindCBR:
		b = hexVar(b, p.Payload)
		if track {
			dp.trackCBR(off, uint8(p.Payload))
		}
		dp.skip = opt.NoTiming
	case KindTMA:
		b = hexVar(b, p.Payload)
		b = append(b, ", "...)
		b = hexVar(b, uint64(p.Aux))
		if track {
			dp.trackTMA(off, p)
		}
		dp.skip = opt.NoTiming
	case KindMTC:
		b = hex8(b, uint32(p.Payload), 1)
		if track {
			dp.trackMTC(off, uint8(p.Payload))
		}
		dp.skip = opt.NoTiming
	case KindCYC:
		if p.Payload < 1<<32 {
			b = hex8(b, uint32(p.Payload), 1)
		} else {
			b = hexVar(b, p.Payload)
		}
		if track && !opt.NoCyc {
			dp.trackCyc(off, p.Payload)
		}
		dp.skip = opt.NoTiming || opt.NoCyc
	case KindMNT:
		b = hexVar(b, p.Payload)
	case KindExStop:
		if p.Flags&FlagIP != 0 {
			b = append(b, "ip"...)
		}
	case KindMWait:
		b = hexN(b, p.Payload, 8)
		b = append(b, ", "...)
		b = hexN(b, uint64(p.Aux), 8)
	case KindPwrE:
		b = cstate(b, p.Type, p.Sub)
		if p.Flags&FlagHW != 0 {
			b = append(b, ", hw"...)
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
		b = append(b, wr...)
		b = append(b, ": c"...)
		b = strconv.AppendUint(b, uint64((p.Type+1)&0xf), 10)
		b = append(b, ", c"...)
		b = strconv.AppendUint(b, uint64((p.Sub+1)&0xf), 10)
	case KindPTW:
		b = hexVar(b, uint64(p.Bits))
		b = append(b, ": "...)
		b = hexVar(b, p.Payload)
		if p.Flags&FlagIP != 0 {
			b = append(b, ", ip"...)
		}
	case KindCFE:
		dp.id = append(dp.id, "type"...)
		dp.tp = append(dp.tp, CFETypeName(p.Type)...)
		b = strconv.AppendUint(b, uint64(p.Type), 10)
		switch p.Type {
		case 1, 9, 12, 14: // intr, vmexit_intr, uintr, swintr: decimal vector
			b = append(b, ": "...)
			b = strconv.AppendUint(b, uint64(p.Aux), 10)
		case 5: // sipi: hex vector
			b = append(b, ": "...)
			b = hexVar(b, uint64(p.Aux))
		}
		if p.Flags&FlagIP != 0 {
			b = append(b, ", ip"...)
		}
	case KindEVD:
		b = strconv.AppendUint(b, uint64(p.Type), 10)
		b = append(b, ": "...)
		b = hexVar(b, p.Payload)
		dp.id = append(dp.id, "type"...)
		dp.tp = append(dp.tp, EVDTypeName(p.Type)...)
	case KindTrig:
		dp.ext = true
		b = hexN(b, uint64(p.Type), 2)
		if p.Flags&FlagIP != 0 {
			b = append(b, ", ip"...)
		}
		if p.Flags&FlagMult != 0 {
			b = append(b, ", mult"...)
		}
		if p.Flags&FlagICNTValid != 0 {
			b = append(b, ", icnt: "...)
			b = strconv.AppendUint(b, uint64(p.Aux), 10)
		}
	case KindBBP:
		b = hexVar(b, uint64(p.Type))
		if p.Flags&FlagBlock4 != 0 {
			b = append(b, ", sz4"...)
		} else {
			b = append(b, ", sz8"...)
		}
	case KindBIP:
		dp.ext = true
		b = hexVar(b, uint64(p.Type))
		b = append(b, ": "...)
		b = hexVar(b, p.Payload)
	case KindBEP:
		if p.Flags&FlagIP != 0 {
			b = append(b, "ip"...)
		}
	}
	dp.inLine = false
	if n := len(b) - ss; (n <= 24 || dp.ext && n <= 47) && len(dp.id) == 0 && len(dp.pend) == 0 && !dp.skip && !opt.Quiet {
		// The usual line: a payload that fits, nothing after it.
		if n == 0 {
			b = b[:os+int(dp.kt.nameLen[p.Kind])]
		}
		b = append(b, '\n')
	} else {
		b = dp.endLine(b, ls, os, ss, int(dp.kt.nameLen[p.Kind]))
	}
	dp.out = b
	if len(b) >= dumpFlushAt {
		dp.flush()
	}
}

// endLine completes the line started at ls in b, its opcode column at os
// and its payload from ss: the payload truncated to its field, the id and
// tp columns, the newline; the diagnostics met go before the line, and
// a line not shown is dropped.
func (dp *dumper) endLine(b []byte, ls, os, ss, nameLen int) []byte {
	n, lim := len(b)-ss, 24
	if dp.ext {
		lim = 47
	}
	if n > lim {
		b, n = b[:ss+lim], lim
	}
	if len(dp.id) > 0 {
		if n == 0 {
			b = append(b[:os+nameLen], ' ')
			ss = len(b)
		}
		b = pad(b, ss, 25)
		b = append(b, ' ')
		start := len(b)
		b = append(b, trunc(dp.id, 4)...)
		b = pad(b, start, 5)
		b = append(b, trunc(dp.tp, 16)...)
	} else if n == 0 {
		b = b[:os+nameLen]
	}
	b = append(b, '\n')
	if dp.skip || dp.opt.Quiet {
		b = b[:ls]
	}
	if len(dp.pend) > 0 {
		line := len(b) - ls
		b = append(b, dp.pend...)
		copy(b[ls+len(dp.pend):], b[ls:ls+line])
		copy(b[ls:], dp.pend)
		dp.pend = dp.pend[:0]
	}
	return b
}

// ipPayload appends the payload of an IP packet, in room the caller made.
func ipPayload(b []byte, p *Packet) []byte {
	b = append(b, byte('0'+p.IPC), ':', ' ')
	switch p.IPC {
	case IPCSuppressed:
		b = append(b, "????????????????"...)
	case IPCUpdate16:
		b = append(b, "????????????"...)
		b = hex8(b, uint32(p.Payload), 4) // 16 bits
	case IPCUpdate32:
		b = append(b, "????????"...)
		b = hex8(b, uint32(p.Payload), 8) // 32 bits
	case IPCUpdate48:
		b = append(b, "????"...)
		b = hexN(b, p.Payload, 12)
	case IPCSext48:
		b = hex16(b, sext48(p.Payload))
	default:
		b = hex16(b, p.Payload)
	}
	return b
}

const hexDigits = "0123456789abcdef"

// opcodeCol is the width of the opcode column with the space after it.
const opcodeCol = 11

// kindTable holds each kind's opcode column (its name cut to 9 bytes,
// padded to 10, a space) as two little-endian words, and the length of
// the name in it.
type kindTable struct {
	cols    [256][2]uint64
	nameLen [256]uint8
}

// kindTab builds the kindTable on the first dump, not at start-up: its
// 256 names (fmt for the kinds without one) cost every command of the
// binary about 0.3 M instructions when built by a package variable.
var kindTab = sync.OnceValue(func() *kindTable {
	t := new(kindTable)
	for i := range t.cols {
		name := Kind(i).String()
		if len(name) > 9 {
			name = name[:9]
		}
		var col [16]byte
		copy(col[:], name)
		for j := len(name); j < opcodeCol; j++ {
			col[j] = ' '
		}
		t.cols[i] = [2]uint64{binary.LittleEndian.Uint64(col[:]), binary.LittleEndian.Uint64(col[8:])}
		t.nameLen[i] = uint8(len(name))
	}
	return t
})

// room returns b resliced to n bytes more, grown if its capacity is short.
func room(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		b = slices.Grow(b, n)
	}
	return b[:len(b)+n]
}

// hexWord returns the 8 lowercase hex digits of v, the most significant
// in the lowest byte (to be stored little-endian).
func hexWord(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f // byte i: nibble i
	x = bits.ReverseBytes64(x)
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101 // 1 in the bytes >= 10
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}

// hex16 appends the 16 hex digits of v.
func hex16(b []byte, v uint64) []byte {
	l := len(b)
	b = room(b, 16)
	binary.LittleEndian.PutUint64(b[l:], hexWord(uint32(v>>32)))
	binary.LittleEndian.PutUint64(b[l+8:], hexWord(uint32(v)))
	return b
}

// hex8 appends v in hex, zero-padded to at least n <= 8 digits, as
// hexN does, in room the caller made (8 bytes past len(b)).
func hex8(b []byte, v uint32, n int) []byte {
	n = max((bits.Len32(v|1)+3)>>2, n)
	l := len(b)
	binary.LittleEndian.PutUint64(b[l:l+8], hexWord(v<<(uint(8-n)*4)))
	return b[:l+n]
}

// hexVar appends v in hex as strconv.AppendUint(b, v, 16) does.
func hexVar(b []byte, v uint64) []byte {
	return hexN(b, v, 1)
}

// hexN appends v in hex, zero-padded to at least n <= 16 digits.
func hexN(b []byte, v uint64, n int) []byte {
	n = max((bits.Len64(v|1)+3)>>2, n)
	l := len(b)
	b = room(b, 16)
	if n <= 8 {
		binary.LittleEndian.PutUint64(b[l:], hexWord(uint32(v<<(uint(8-n)*4))))
	} else {
		v <<= uint(16-n) * 4
		binary.LittleEndian.PutUint64(b[l:], hexWord(uint32(v>>32)))
		binary.LittleEndian.PutUint64(b[l+8:], hexWord(uint32(v)))
	}
	return b[:l+n]
}

// buildTntChars builds tntChars (tables_gen.go), which holds, for each byte, its bits as ptdump prints TNT bits
// ('!' taken, '.' not taken), the most significant first, as a
// little-endian word.
func buildTntChars() (t [256]uint64) {
	for i := range t {
		var s [8]byte
		for j := range s {
			s[j] = '.'
			if i>>(7-j)&1 != 0 {
				s[j] = '!'
			}
		}
		t[i] = binary.LittleEndian.Uint64(s[:])
	}
	return t
}

// appendTNT appends the n low bits of v (n <= 64), the most significant
// first, as TNT bits.
func appendTNT(b []byte, v uint64, n uint8) []byte {
	l := len(b)
	b = room(b, 64)
	q := v << ((64 - uint(n)) & 63)
	if n == 0 {
		q = 0
	}
	for i := 0; i < int(n); i += 8 {
		binary.LittleEndian.PutUint64(b[l+i:], tntChars[q>>56])
		q <<= 8
	}
	return b[:l+int(n)]
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
