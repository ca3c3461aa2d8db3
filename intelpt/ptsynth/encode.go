package ptsynth

import (
	"fmt"

	"github.com/iotap/iotap/intelpt"
)

// Kind is what the encoder needs to know of an instruction.
type Kind uint8

// Instruction kinds.
const (
	Other        Kind = iota // falls through
	CondJump                 // jcc, loop, jrcxz: a TNT bit
	JumpDirect               // no packet
	CallDirect               // no packet; pushes the return address
	JumpIndirect             // TIP
	CallIndirect             // TIP; pushes the return address
	Return                   // TNT taken bit when compressed, else TIP
	Syscall                  // user-only tracing: TIP.PGD, then TIP.PGE at the return
	Unsupported              // far branches, int, iret...: not synthesized
)

// Classifier decodes the instruction at the start of code (64-bit mode):
// its length and kind.
type Classifier func(code []byte) (length int, k Kind, err error)

// Options of the encoder.
type Options struct {
	// PSBPeriod: a PSB+ is written when at least this many bytes of trace
	// were written since the last one (0: 4096).
	PSBPeriod int
	// TSC of the first instruction, and TSC ticks per instruction: the
	// synthetic clock (0: 1e9 and 1).
	TSC0, TicksPerInsn uint64
	// NoRetComp disables return compression (every ret is a TIP).
	NoRetComp bool
	// Mode32: the program is 32-bit code (MODE.Exec with CS.D; classify
	// with X86Mode32).
	Mode32 bool
}

// Encoded is the PT trace of a run and what the CPU knew while writing it.
type Encoded struct {
	PT []byte
	// TSC of each step (the synthetic clock).
	TSC []uint64
	// Kinds and lengths of the steps' instructions.
	Kinds []Kind
	Lens  []uint8
	// Packets counts what was written.
	PSBs, TNTBits, TIPs, PGDs, PGEs, CompressedRets int
}

// retStack is the CPU's return-compression stack: 64 entries, the oldest
// dropped when full, cleared at a PSB (as libipt's decoder expects).
type retStack struct {
	a [64]uint64
	n int
}

func (s *retStack) push(v uint64) {
	if s.n == len(s.a) {
		copy(s.a[:], s.a[1:])
		s.n--
	}
	s.a[s.n] = v
	s.n++
}

type encoder struct {
	mode   intelpt.Flags // MODE.Exec flags: FlagCSL (64-bit) or FlagCSD (32-bit)
	e      intelpt.Encoder
	lastIP uint64
	tnt    uint64
	nbits  uint8
	out    *Encoded
}

func (w *encoder) put(p intelpt.Packet) {
	w.e.Encode(p)
}

func (w *encoder) flushTNT() {
	if w.nbits > 0 {
		w.put(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: w.nbits, Payload: w.tnt})
		w.tnt, w.nbits = 0, 0
	}
}

func (w *encoder) bit(taken bool) {
	w.tnt <<= 1
	if taken {
		w.tnt |= 1
	}
	w.nbits++
	w.out.TNTBits++
	if w.nbits == 6 {
		w.flushTNT()
	}
}

// ip writes an IP packet with the smallest compression against the last IP.
func (w *encoder) ip(kind intelpt.Kind, ip uint64) {
	w.flushTNT()
	var ipc intelpt.IPC
	var pl uint64
	switch {
	case ip>>16 == w.lastIP>>16:
		ipc, pl = intelpt.IPCUpdate16, ip&0xffff
	case ip>>32 == w.lastIP>>32:
		ipc, pl = intelpt.IPCUpdate32, ip&0xffffffff
	case uint64(int64(ip<<16)>>16) == ip:
		ipc, pl = intelpt.IPCSext48, ip&0xffffffffffff
	default:
		ipc, pl = intelpt.IPCFull, ip
	}
	w.put(intelpt.Packet{Kind: kind, IPC: ipc, Payload: pl})
	w.lastIP = ip
}

// psb writes a PSB+ for the next instruction at ip (tracing enabled when
// fup is set).
func (w *encoder) psb(ip, tsc uint64, fup bool) {
	w.flushTNT()
	w.put(intelpt.Packet{Kind: intelpt.KindPSB})
	w.lastIP = 0
	w.put(intelpt.Packet{Kind: intelpt.KindTSC, Payload: tsc & (1<<56 - 1)})
	w.put(intelpt.Packet{Kind: intelpt.KindModeExec, Flags: w.mode})
	if fup {
		w.ip(intelpt.KindFUP, ip)
	}
	w.put(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	w.out.PSBs++
}

// Encode writes the PT trace a CPU tracing user mode only (branch
// tracing, TSC, return compression unless NoRetComp) would write for the
// steps of run: PSB+ and TIP.PGE at the first instruction, TNT bits for
// conditional branches and compressed returns, TIP for indirect branches
// and uncompressed returns, TIP.PGD (IP suppressed: the target is kernel
// code) at each system call and TIP.PGE at the instruction it returns to,
// a PSB+ (TSC, MODE.Exec, FUP) every PSBPeriod bytes, and TIP.PGD at the
// last instruction (exit_group). Control flow that is not a branch (a
// signal) is an error.
func Encode(run *Run, classify Classifier, o Options) (*Encoded, error) {
	if o.PSBPeriod <= 0 {
		o.PSBPeriod = 4096
	}
	if o.TSC0 == 0 {
		o.TSC0 = 1_000_000_000
	}
	if o.TicksPerInsn == 0 {
		o.TicksPerInsn = 1
	}
	out := &Encoded{TSC: make([]uint64, len(run.Steps)), Kinds: make([]Kind, len(run.Steps)), Lens: make([]uint8, len(run.Steps))}
	w := &encoder{out: out, mode: intelpt.FlagCSL}
	if o.Mode32 {
		w.mode = intelpt.FlagCSD
	}
	var rs retStack
	steps := run.Steps
	if len(steps) == 0 {
		return out, nil
	}
	tsc := func(i int) uint64 { return o.TSC0 + uint64(i)*o.TicksPerInsn }
	w.psb(0, tsc(0), false)
	w.put(intelpt.Packet{Kind: intelpt.KindTIPPGE, IPC: intelpt.IPCSext48, Payload: steps[0].IP & 0xffffffffffff})
	w.lastIP = steps[0].IP
	out.PGEs++
	lastPSB := 0
	for i, s := range steps {
		out.TSC[i] = tsc(i)
		code := run.Bytes(s.IP)
		if code == nil {
			return nil, fmt.Errorf("ptsynth: step %d: no code at %#x", i, s.IP)
		}
		n, k, err := classify(code)
		if err != nil {
			return nil, fmt.Errorf("ptsynth: step %d at %#x: %w", i, s.IP, err)
		}
		out.Kinds[i], out.Lens[i] = k, uint8(n)
		last := i+1 == len(steps)
		var next uint64
		if !last {
			next = steps[i+1].IP
		}
		fall := s.IP + uint64(n)
		switch k {
		case Other, JumpDirect, CallDirect:
			if k == CallDirect {
				rs.push(fall)
			}
			if !last && k == Other && next != fall {
				return nil, fmt.Errorf("ptsynth: step %d: %#x is not a branch but the next instruction is at %#x (a signal or an unknown branch)", i, s.IP, next)
			}
		case CondJump:
			if !last {
				w.bit(next != fall)
			}
		case JumpIndirect, CallIndirect:
			if k == CallIndirect {
				rs.push(fall)
			}
			if !last {
				w.ip(intelpt.KindTIP, next)
				out.TIPs++
			}
		case Return:
			if last {
				break
			}
			if !o.NoRetComp && rs.n > 0 && rs.a[rs.n-1] == next {
				rs.n--
				w.bit(true)
				out.CompressedRets++
			} else {
				w.ip(intelpt.KindTIP, next)
				out.TIPs++
			}
		case Syscall:
			w.flushTNT()
			w.put(intelpt.Packet{Kind: intelpt.KindTIPPGD, IPC: intelpt.IPCSuppressed})
			out.PGDs++
			if last {
				continue
			}
			// The kernel runs untraced; tracing resumes where it returns.
			w.put(intelpt.Packet{Kind: intelpt.KindModeExec, Flags: w.mode})
			w.ip(intelpt.KindTIPPGE, next)
			out.PGEs++
		default:
			return nil, fmt.Errorf("ptsynth: step %d at %#x: instruction kind %d is not synthesized", i, s.IP, k)
		}
		if last {
			if k != Syscall {
				w.flushTNT()
				w.put(intelpt.Packet{Kind: intelpt.KindTIPPGD, IPC: intelpt.IPCSuppressed})
				out.PGDs++
			}
			break
		}
		if len(w.e.Bytes())-lastPSB >= o.PSBPeriod && k != Syscall {
			w.psb(next, tsc(i+1), true)
			rs.n = 0
			lastPSB = len(w.e.Bytes())
		}
	}
	if err := w.e.Err(); err != nil {
		return nil, fmt.Errorf("ptsynth: %w", err)
	}
	out.PT = w.e.Bytes()
	return out, nil
}
