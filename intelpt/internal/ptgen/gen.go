package ptgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/iotap/iotap/intelpt"
)

// Config selects what Generate writes. The zero value of every field but
// Insns has a default.
type Config struct {
	Seed  uint64 // the same Config gives the same bytes
	Insns int    // instructions to execute (at least 1)

	Base     uint64 // load address of the code; 0: chosen from the seed
	CodeSize int    // bytes of code; 0: 256 KiB

	PSBPeriod int // bytes between PSB+ (a CPU writes one when the count passes it); 0: 4 KiB

	Timing bool // TSC, TMA and CBR in PSB+, MTC every 2^3 crystal clock ticks
	CYC    bool // cycle-accurate mode: CYC before every TNT, TIP, FUP and TIP.PG*

	// NoIPs leaves Program.IPs empty (for very long runs that only need
	// the trace).
	NoIPs bool

	// Kernel traces the kernel too: syscalls and interrupts go into
	// kernel code (loaded at KernelAddr) as far branches (TIP, FUP+TIP)
	// and come back with sysretq and iretq, instead of TIP.PGD/TIP.PGE.
	Kernel bool

	// FUPOnPTW: a FUP with the ptwrite's IP follows each PTW packet
	// (IA32_RTIT_CTL.FUPonPTW).
	FUPOnPTW bool

	// Overflows per million instructions: the CPU's internal buffer
	// overflows, packets are lost for up to a few thousand instructions,
	// then OVF and FUP say where tracing resumes. 0: none.
	Overflows int

	// MaxDepth bounds the program's call depth, as a real program's stack
	// is bounded: beyond it, every indirect jump or call goes to a return
	// instruction (a jump returns from one call; a call is at once
	// returned from). 0: the random code's depth drifts deeper with the
	// run's length (indirect jumps return from a call only half of the
	// time beyond 512 calls).
	MaxDepth int

	// Events per million instructions: syscalls are written into the code
	// at this rate (of blocks), interrupts happen at this rate. 0: 200.
	// Negative: none.
	EventRate int
}

// Program is one generated run: the code, the trace a CPU would write for
// one run of it, and the instructions that really ran. Without
// Config.Kernel only user code is traced (as perf record -e intel_pt//u
// does); with it, user and kernel code.
type Program struct {
	Base  uint64 // load address of Code
	Code  []byte // the user code
	Trace []byte
	// IPs holds every instruction executed, in order (empty with
	// NoIPs), except those whose trace an overflow lost: the
	// instructions a decoder can reconstruct. Gaps says where those were.
	IPs   []uint64
	Gaps  []Gap
	Count int // number of instructions executed
	Stats Stats

	// With Config.Kernel: the kernel code (syscall entry, interrupt
	// handlers, the functions they call) and its load address.
	KernelBase uint64
	Kernel     []byte

	secs  []section
	insns []insn
}

// Gap is an internal buffer overflow: the instructions from IPs[At] on
// follow an OVF packet; Lost instructions ran before them without trace
// (from the last instruction whose packets were written).
type Gap struct {
	At, Lost int
}

type section struct {
	base uint64
	code []byte
	at   []int32 // offset -> index in Program.insns, -1 inside an instruction
}

// Stats counts what the trace holds, so tests can check that every feature
// was exercised.
type Stats struct {
	Packets      map[intelpt.Kind]int
	IPC          [8]int // TIP/FUP/TIP.PGE/TIP.PGD packets by IP compression
	TNTBits      int
	CompRet      int // returns compressed into a TNT bit
	UncompRet    int // returns written as TIP
	RetOverflow  int // calls that pushed the oldest entry off the 64-entry return stack
	DeepestCall  int // the program's deepest call stack (in user code)
	Executed     [numKinds]int
	ExecClass    [numClasses]int
	Instructions int // instructions in the image
}

type insn struct {
	addr    uint64
	size    uint8
	kind    Kind
	class   Class
	dispAt  uint8 // offset of the rel8/rel32 displacement in the instruction
	dispLen uint8
	fwd     bool     // a conditional branch that must go forwards
	fixed   bool     // target chosen at layout
	limit   uint64   // targets must be below limit (0: anywhere in the section)
	target  uint64   // direct branches
	targets []uint64 // indirect branches: the targets this site jumps to
}

func (p *Program) find(ip uint64) *insn {
	for i := range p.secs {
		s := &p.secs[i]
		if off := ip - s.base; off < uint64(len(s.at)) {
			if j := s.at[off]; j >= 0 {
				return &p.insns[j]
			}
			return nil
		}
	}
	return nil
}

// Len returns the length of the instruction at ip, or 0 when no generated
// instruction starts there.
func (p *Program) Len(ip uint64) int {
	if in := p.find(ip); in != nil {
		return int(in.size)
	}
	return 0
}

// KindAt returns the kind of the instruction at ip (KindOther when none
// starts there).
func (p *Program) KindAt(ip uint64) Kind {
	if in := p.find(ip); in != nil {
		return in.kind
	}
	return KindOther
}

// Next returns the IP of the instruction that follows the one at ip when
// that needs no trace (not a branch, or a direct jump or call), and false
// for a conditional, indirect or far branch or when no instruction starts
// at ip.
func (p *Program) Next(ip uint64) (uint64, bool) {
	in := p.find(ip)
	if in == nil {
		return 0, false
	}
	switch in.kind {
	case KindOther, KindCallNext, KindPTWrite:
		return ip + uint64(in.size), true
	case KindJmp, KindCall:
		return in.target, true
	}
	return 0, false
}

// Boundaries returns the offsets of every instruction in the section
// loaded at base (Base or KernelBase), in order.
func (p *Program) Boundaries(base uint64) []uint32 {
	var b []uint32
	for i := range p.insns {
		if p.secBase(p.insns[i].addr) == base {
			b = append(b, uint32(p.insns[i].addr-base))
		}
	}
	return b
}

func (p *Program) secBase(ip uint64) uint64 {
	for i := range p.secs {
		if ip-p.secs[i].base < uint64(len(p.secs[i].code)) {
			return p.secs[i].base
		}
	}
	return 0
}

// KernelAddr is where Config.Kernel loads the kernel code.
const KernelAddr = 0xffffffff81000000

// Generate builds a random program and runs it.
func Generate(cfg Config) (*Program, error) {
	if cfg.Insns < 1 {
		return nil, errors.New("ptgen: Insns must be at least 1")
	}
	if cfg.CodeSize == 0 {
		cfg.CodeSize = 256 << 10
	}
	if cfg.CodeSize < 4096 || cfg.CodeSize > 1<<30 {
		return nil, fmt.Errorf("ptgen: code size %d out of range (4 KiB to 1 GiB)", cfg.CodeSize)
	}
	if cfg.PSBPeriod == 0 {
		cfg.PSBPeriod = 4096
	}
	if cfg.EventRate == 0 {
		cfg.EventRate = 200
	}
	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	if cfg.Base == 0 {
		// A user-space address: below 2^47, sometimes above 4 GiB so that
		// IPs differ from each other in more than the low 32 bits.
		cfg.Base = uint64(0x400000 + r.IntN(1<<10)*0x1000)
		if r.IntN(2) == 0 {
			cfg.Base = 0x7f0000000000 + uint64(r.IntN(1<<20))*0x1000
		}
	}
	p := &Program{Base: cfg.Base}
	b := &builder{r: r, base: cfg.Base}
	b.user(cfg)
	p.Code = b.finish(p)
	var k *kernel
	if cfg.Kernel {
		b = &builder{r: r, base: KernelAddr}
		k = b.kernel()
		p.KernelBase, p.Kernel = KernelAddr, b.finish(p)
	}
	p.Stats.Instructions = len(p.insns)
	if err := run(r, p, k, cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// builder lays out the code of one section.
type builder struct {
	r     *rand.Rand
	base  uint64
	code  []byte
	insns []insn
}

func (b *builder) add(start int, k Kind, c Class, dispAt, dispLen int) *insn {
	b.insns = append(b.insns, insn{addr: b.base + uint64(start), size: uint8(len(b.code) - start), kind: k, class: c, dispAt: uint8(dispAt), dispLen: uint8(dispLen)})
	return &b.insns[len(b.insns)-1]
}

func (b *builder) others(n int) {
	for ; n > 0; n-- {
		start := len(b.code)
		var c Class
		b.code, c = appendOther(b.r, b.code)
		b.add(start, KindOther, c, 0, 0)
	}
}

func (b *builder) pc() uint64 { return b.base + uint64(len(b.code)) }

// user fills the user code with blocks: straight-line instructions, each
// block ending in a branch. Direct jumps and calls only go forwards (so no
// cycle of branches without trace exists); conditional branches go both
// ways.
func (b *builder) user(cfg Config) {
	r := b.r
	b.code = make([]byte, 0, cfg.CodeSize+64)
	syscallPer := 0
	if cfg.EventRate > 0 {
		syscallPer = 1_000_000 / cfg.EventRate / 2
		if syscallPer < 1 {
			syscallPer = 1
		}
	}
	for len(b.code) < cfg.CodeSize-64 {
		b.others(r.IntN(12))
		start := len(b.code)
		hint := func() {
			if r.IntN(16) == 0 {
				b.code = append(b.code, []byte{0x2e, 0x3e}[r.IntN(2)]) // branch hints
			}
		}
		bnd := func() {
			if r.IntN(16) == 0 {
				b.code = append(b.code, 0xf2) // MPX bnd prefix
			}
		}
		switch n := r.IntN(100); {
		case n < 28: // jcc rel8
			hint()
			b.code = append(b.code, 0x70+byte(r.IntN(16)), 0)
			b.add(start, KindJcc, ClassBranch, len(b.code)-1-start, 1)
		case n < 40: // jcc rel32
			bnd()
			b.code = append(b.code, 0x0f, 0x80+byte(r.IntN(16)), 0, 0, 0, 0)
			b.add(start, KindJcc, ClassBranch, len(b.code)-4-start, 4)
		case n < 43: // loop, loope, loopne, jrcxz (jecxz with 67)
			op := 0xe0 + byte(r.IntN(4))
			if op == 0xe3 && r.IntN(2) == 0 {
				b.code = append(b.code, 0x67)
			}
			b.code = append(b.code, op, 0)
			b.add(start, KindJcc, ClassBranch, len(b.code)-1-start, 1)
		case n < 47: // jmp rel8
			b.code = append(b.code, 0xeb, 0)
			b.add(start, KindJmp, ClassBranch, len(b.code)-1-start, 1)
		case n < 50: // jmp rel32
			bnd()
			b.code = append(b.code, 0xe9, 0, 0, 0, 0)
			b.add(start, KindJmp, ClassBranch, len(b.code)-4-start, 4)
		case n < 64: // call rel32
			bnd()
			b.code = append(b.code, 0xe8, 0, 0, 0, 0)
			b.add(start, KindCall, ClassBranch, len(b.code)-4-start, 4)
		case n < 65: // call next; pop reg (position-independent code)
			b.code = append(b.code, 0xe8, 0, 0, 0, 0)
			b.add(start, KindCallNext, ClassBranch, 0, 0)
			start = len(b.code)
			if r.IntN(2) == 0 {
				b.code = append(b.code, 0x41)
			}
			b.code = append(b.code, 0x58+byte(r.IntN(8)))
			b.add(start, KindOther, ClassLegacy, 0, 0)
		case n < 80: // ret, rep ret, bnd ret, ret imm16
			switch r.IntN(8) {
			case 0:
				b.code = append(b.code, 0xf3, 0xc3)
			case 1:
				b.code = append(b.code, 0xf2, 0xc3)
			case 2:
				b.code = append(b.code, 0xc2, byte(r.IntN(4))*8, 0)
			default:
				b.code = append(b.code, 0xc3)
			}
			b.add(start, KindRet, ClassBranch, 0, 0)
		case n < 90: // jmp r/m64, call r/m64
			b.indirect(r.IntN(2) == 0)
		case n < 91: // ptwrite r/m32 or r/m64
			b.code = append(b.code, 0xf3)
			if r.IntN(2) == 0 {
				b.code = append(b.code, 0x48|byte(r.IntN(8)))
			}
			b.code = append(b.code, 0x0f, 0xae)
			b.code = appendModRM(r, b.code, 4, formAny)
			b.add(start, KindPTWrite, ClassBranch, 0, 0)
		default:
			if syscallPer > 0 && r.IntN(syscallPer/50+1) == 0 {
				b.code = append(b.code, 0x0f, 0x05)
				b.add(start, KindSyscall, ClassBranch, 0, 0)
			}
			// else: no branch, the block falls through into the next
		}
	}
	// The last block: a few instructions and an indirect jump, so that
	// execution never runs off the end and forward branches always have a
	// target.
	b.others(2)
	start := len(b.code)
	b.code = append(b.code, 0xff, 0xe0)
	b.add(start, KindJmpInd, ClassBranch, 0, 0)
}

// indirect appends jmp r/m64 or call r/m64.
func (b *builder) indirect(call bool) *insn {
	r := b.r
	start := len(b.code)
	k, digit := KindJmpInd, byte(4)
	if call {
		k, digit = KindCallInd, 2
	}
	if r.IntN(8) == 0 {
		b.code = append(b.code, 0x3e) // notrack
	}
	if r.IntN(16) == 0 {
		b.code = append(b.code, 0xf2) // bnd
	}
	if r.IntN(3) == 0 {
		b.code = append(b.code, 0x40|byte(r.IntN(16)))
	}
	b.code = append(b.code, 0xff)
	b.code = appendModRM(r, b.code, digit, formAny)
	return b.add(start, k, ClassBranch, 0, 0)
}

// kernel is the layout of the kernel code.
type kernel struct {
	syscall  uint64   // the syscall entry (ends in sysretq)
	handlers []uint64 // interrupt handlers (end in iretq)
}

// kernel lays out leaf functions (ending in ret), interrupt handlers
// (ending in iretq) and a syscall entry (swapgs ... swapgs; sysretq). The
// handlers call the leaf functions directly and indirectly; their
// conditional branches only go forwards, so each handler returns.
func (b *builder) kernel() *kernel {
	r := b.r
	k := &kernel{}
	var leaves []uint64
	body := func(endBlocks int, calls bool) {
		for i := 0; i < endBlocks; i++ {
			b.others(1 + r.IntN(8))
			start := len(b.code)
			switch n := r.IntN(4); {
			case n == 0 || !calls:
				b.code = append(b.code, 0x70+byte(r.IntN(16)), 0)
				b.add(start, KindJcc, ClassBranch, len(b.code)-1-start, 1).fwd = true
			case n == 1:
				b.code = append(b.code, 0xe8, 0, 0, 0, 0)
				in := b.add(start, KindCall, ClassBranch, len(b.code)-4-start, 4)
				in.fixed, in.target = true, leaves[r.IntN(len(leaves))]
			case n == 2:
				in := b.indirect(true)
				for j := 1 + r.IntN(3); j > 0; j-- {
					in.targets = append(in.targets, leaves[r.IntN(len(leaves))])
				}
			}
		}
	}
	for i := 0; i < 24; i++ {
		first := len(b.insns)
		leaves = append(leaves, b.pc())
		body(r.IntN(3), false)
		b.others(r.IntN(3))
		start := len(b.code)
		b.code = append(b.code, 0xc3)
		b.add(start, KindRet, ClassBranch, 0, 0)
		b.limit(first)
	}
	swapgs := func() {
		start := len(b.code)
		b.code = append(b.code, 0x0f, 0x01, 0xf8)
		b.add(start, KindOther, ClassLegacy, 0, 0)
	}
	for i := 0; i < 9; i++ {
		first := len(b.insns)
		if i == 0 {
			k.syscall = b.pc()
			swapgs()
		} else {
			k.handlers = append(k.handlers, b.pc())
		}
		body(1+r.IntN(6), true)
		b.others(1)
		start := len(b.code)
		if i == 0 {
			swapgs()
			start = len(b.code)
			b.code = append(b.code, 0x48, 0x0f, 0x07) // sysretq
		} else {
			b.code = append(b.code, 0x48, 0xcf) // iretq
		}
		b.add(start, KindFarRet, ClassBranch, 0, 0)
		b.limit(first)
	}
	return k
}

// limit keeps the targets of the conditional branches from instruction
// first on inside the function that ends here.
func (b *builder) limit(first int) {
	for i := first; i < len(b.insns); i++ {
		b.insns[i].limit = b.pc()
	}
}

// finish resolves the branch targets, patches the displacements and adds
// the section to p.
func (b *builder) finish(p *Program) []byte {
	r, code := b.r, b.code
	starts := make([]uint64, len(b.insns))
	for i := range b.insns {
		starts[i] = b.insns[i].addr
	}
	pickIn := func(lo, hi uint64) uint64 { // a random instruction start in [lo, hi]
		i := sort.Search(len(starts), func(i int) bool { return starts[i] >= lo })
		j := sort.Search(len(starts), func(i int) bool { return starts[i] > hi })
		return starts[i+r.IntN(j-i)]
	}
	first, last := b.base, b.base+uint64(len(code))-1
	for i := range b.insns {
		in := &b.insns[i]
		end := in.addr + uint64(in.size)
		switch in.kind {
		case KindJcc, KindJmp, KindCall:
			if !in.fixed {
				lo, hi := first, last
				if in.limit != 0 {
					hi = in.limit - 1
				}
				if in.dispLen == 1 {
					lo, hi = max(lo, end-128), min(hi, end+127)
				} else if r.IntN(2) == 0 {
					// Mostly near targets, like real code.
					lo, hi = max(lo, end-4096), min(hi, end+4096)
				}
				switch {
				case in.kind == KindJmp || in.fwd:
					lo = max(lo, end)
				case in.kind == KindCall:
					lo = max(lo, end+1) // a zero displacement is a call-next
					if lo > hi {
						lo, hi = end+1, last
					}
				}
				in.target = pickIn(lo, hi)
			}
			d := int64(in.target - end)
			pos := int(in.addr-b.base) + int(in.dispAt)
			if in.dispLen == 1 {
				code[pos] = byte(int8(d))
			} else {
				v := uint32(int32(d))
				code[pos], code[pos+1], code[pos+2], code[pos+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
			}
		case KindJmpInd, KindCallInd:
			if len(in.targets) > 0 {
				break
			}
			n := 1 + r.IntN(6)
			if r.IntN(4) == 0 {
				n = 1 // a function pointer that never changes
			}
			for ; n > 0; n-- {
				in.targets = append(in.targets, starts[r.IntN(len(starts))])
			}
		}
	}
	at := make([]int32, len(code))
	for i := range at {
		at[i] = -1
	}
	for i := range b.insns {
		at[b.insns[i].addr-b.base] = int32(len(p.insns) + i)
	}
	p.insns = append(p.insns, b.insns...)
	p.secs = append(p.secs, section{base: b.base, code: code, at: at})
	return code
}

// retStackSize is the depth of the CPU's return-compression stack (Intel
// SDM vol. 3, "Indirect Transfer Compression for Returns").
const retStackSize = 64

// cpu is the state a CPU keeps while it writes the trace.
type cpu struct {
	r   *rand.Rand
	cfg Config
	p   *Program
	out []byte

	lastIP   uint64 // the last IP sent in an IP packet, reset at PSB
	tnt      uint64 // pending TNT bits, oldest highest
	tntN     int
	tntCap   int
	lastPSB  int
	enabled  bool // PacketEn
	modeSent bool // a MODE.Exec was sent since the last PSB

	ret    [retStackSize]uint64 // ring of return addresses of calls seen since the PSB
	retTop int
	retN   int

	// Overflow: while drop is set no packet is written. visible is the
	// number of instructions a decoder reaches with the packets written so
	// far; tntAt the instruction count of each pending TNT bit.
	drop     bool
	dropLeft int
	ovfStart int // instructions executed when the overflow started
	lost     int // instructions lost in all overflows
	absIP    bool
	visible  int
	tntAt    [64]int
	executed int

	cycles  uint64 // core clock
	lastCyc uint64
	mtc     uint64 // last crystal clock value >> mtcShift that was sent
}

const (
	mtcShift = 3   // MTC period: 2^3 crystal clock ticks
	tscPerCt = 125 // TSC ticks per crystal clock tick (CPUID 0x15: 250/2)
	tscBase  = 0x12_3456_0000
)

func (c *cpu) emit(pk intelpt.Packet) {
	if c.drop {
		return
	}
	switch pk.Kind {
	case intelpt.KindTNT8, intelpt.KindTNT64:
		c.visible = c.tntAt[pk.Bits-1]
	case intelpt.KindCYC, intelpt.KindMTC, intelpt.KindTSC, intelpt.KindTMA, intelpt.KindCBR,
		intelpt.KindPSB, intelpt.KindPSBEnd, intelpt.KindModeExec, intelpt.KindOVF:
	default:
		c.visible = c.executed
	}
	var err error
	c.out, err = intelpt.Append(c.out, &pk)
	if err != nil {
		panic(fmt.Sprintf("ptgen: %v", err)) // a bug in the generator, never input dependent
	}
	c.p.Stats.Packets[pk.Kind]++
}

// cyc writes a CYC packet with the cycles since the last one, in
// cycle-accurate mode.
func (c *cpu) cyc() {
	if c.cfg.CYC && c.cycles > c.lastCyc {
		c.emit(intelpt.Packet{Kind: intelpt.KindCYC, Payload: c.cycles - c.lastCyc})
		c.lastCyc = c.cycles
	}
}

func (c *cpu) tick(n int) {
	c.cycles += uint64(n)
	if c.cfg.Timing {
		if m := (tscBase + c.cycles) / tscPerCt >> mtcShift; m != c.mtc {
			c.mtc = m
			c.cyc()
			c.emit(intelpt.Packet{Kind: intelpt.KindMTC, Payload: m & 0xff})
		}
	}
}

func (c *cpu) flushTNT() {
	if c.tntN == 0 {
		return
	}
	k := intelpt.KindTNT8
	if c.tntN > 6 {
		k = intelpt.KindTNT64
	}
	c.cyc()
	c.emit(intelpt.Packet{Kind: k, Bits: uint8(c.tntN), Payload: c.tnt})
	c.tnt, c.tntN = 0, 0
}

func (c *cpu) tntBit(taken bool) {
	if c.drop {
		return
	}
	if c.tntN == 0 {
		// Short or long TNT: CPUs differ; write both.
		c.tntCap = 6
		if c.r.IntN(3) == 0 {
			c.tntCap = 7 + c.r.IntN(41)
		}
	}
	c.tnt <<= 1
	if taken {
		c.tnt |= 1
	}
	c.tntAt[c.tntN] = c.executed
	c.tntN++
	c.p.Stats.TNTBits++
	if c.tntN == c.tntCap {
		c.flushTNT()
	}
}

// ipPacket writes a TIP, TIP.PGE, TIP.PGD or FUP for ip with a random one
// of the IP compressions that reproduce ip from the last IP.
func (c *cpu) ipPacket(k intelpt.Kind, ip uint64) {
	c.flushTNT()
	c.cyc()
	var cands [5]intelpt.IPC
	n := 0
	x := ip ^ c.lastIP
	if c.absIP {
		x = ^uint64(0) // only compressions that do not depend on the last IP
	}
	if x>>16 == 0 {
		cands[n] = intelpt.IPCUpdate16
		n++
	}
	if x>>32 == 0 {
		cands[n] = intelpt.IPCUpdate32
		n++
	}
	if x>>48 == 0 {
		cands[n] = intelpt.IPCUpdate48
		n++
	}
	if uint64(int64(ip<<16)>>16) == ip {
		cands[n] = intelpt.IPCSext48
		n++
	}
	cands[n] = intelpt.IPCFull
	n++
	ipc := cands[0] // the shortest, as a CPU writes it, most of the time
	if c.r.IntN(3) == 0 {
		ipc = cands[c.r.IntN(n)]
	}
	payload := ip
	switch ipc {
	case intelpt.IPCUpdate16:
		payload &= 0xffff
	case intelpt.IPCUpdate32:
		payload &= 0xffffffff
	case intelpt.IPCUpdate48, intelpt.IPCSext48:
		payload &= 0xffffffffffff
	}
	c.emit(intelpt.Packet{Kind: k, IPC: ipc, Payload: payload})
	if !c.drop {
		c.p.Stats.IPC[ipc]++
	}
	c.lastIP = ip
}

// disable writes TIP.PGD with the IP suppressed: the CPU went to the
// kernel, which is not traced.
func (c *cpu) disable() {
	c.flushTNT()
	c.cyc()
	c.emit(intelpt.Packet{Kind: intelpt.KindTIPPGD, IPC: intelpt.IPCSuppressed})
	c.p.Stats.IPC[intelpt.IPCSuppressed]++
	c.enabled = false
}

// enable writes TIP.PGE at ip, preceded by MODE.Exec when none was sent
// since the last PSB (the mode itself never changes: 64-bit code).
func (c *cpu) enable(ip uint64) {
	if !c.modeSent {
		c.cyc()
		c.emit(intelpt.Packet{Kind: intelpt.KindModeExec, Flags: intelpt.FlagCSL})
		c.modeSent = true
	}
	c.ipPacket(intelpt.KindTIPPGE, ip)
	c.enabled = true
}

// psb writes PSB+ at instruction boundary ip. It resets the last IP and the
// return-compression stack, as the CPU does.
func (c *cpu) psb(ip uint64) {
	c.flushTNT()
	c.lastPSB = len(c.out)
	c.emit(intelpt.Packet{Kind: intelpt.KindPSB})
	c.lastIP = 0
	c.retN = 0
	if c.cfg.Timing {
		tsc := tscBase + c.cycles
		c.emit(intelpt.Packet{Kind: intelpt.KindTSC, Payload: tsc & (1<<56 - 1)})
		ct := tsc / tscPerCt
		c.emit(intelpt.Packet{Kind: intelpt.KindTMA, Payload: ct & 0xffff, Aux: uint32(tsc % tscPerCt)})
		c.emit(intelpt.Packet{Kind: intelpt.KindCBR, Payload: 0x20})
	}
	c.modeSent = c.enabled
	if c.enabled {
		c.emit(intelpt.Packet{Kind: intelpt.KindModeExec, Flags: intelpt.FlagCSL})
		c.ipPacket(intelpt.KindFUP, ip)
	}
	c.emit(intelpt.Packet{Kind: intelpt.KindPSBEnd})
}

func (c *cpu) maybePSB(ip uint64) {
	if !c.drop && len(c.out)-c.lastPSB >= c.cfg.PSBPeriod {
		c.psb(ip)
	}
}

// overflow starts an internal buffer overflow: the pending TNT bits are
// lost, and so are the packets of the next n instructions.
func (c *cpu) overflow(n int) {
	c.tnt, c.tntN = 0, 0
	c.drop, c.dropLeft = true, n
	p := c.p
	if !c.cfg.NoIPs {
		p.IPs = p.IPs[:len(p.IPs)-(c.executed-c.visible)]
	}
	c.ovfStart = c.visible
	p.Gaps = append(p.Gaps, Gap{At: c.visible - c.lost})
}

// resolve ends the overflow at ip: OVF, then FUP with an IP that does not
// depend on the last IP (decoders reset it at OVF). The return stack is
// cleared: the decoder did not see the calls and returns in between.
func (c *cpu) resolve(ip uint64) {
	c.drop = false
	c.emit(intelpt.Packet{Kind: intelpt.KindOVF})
	c.absIP = true
	c.ipPacket(intelpt.KindFUP, ip)
	c.absIP = false
	c.retN = 0
	lost := c.executed - c.ovfStart
	c.p.Gaps[len(c.p.Gaps)-1].Lost = lost
	c.lost += lost
}

func (c *cpu) push(ret uint64) {
	c.retTop = (c.retTop + 1) % retStackSize
	c.ret[c.retTop] = ret
	if c.retN == retStackSize {
		c.p.Stats.RetOverflow++
	} else {
		c.retN++
	}
}

// run executes the program from a random entry and writes the trace.
func run(r *rand.Rand, p *Program, k *kernel, cfg Config) error {
	c := &cpu{r: r, cfg: cfg, p: p, out: make([]byte, 0, cfg.Insns/2+4096)}
	p.Stats.Packets = map[intelpt.Kind]int{}
	if !cfg.NoIPs {
		p.IPs = make([]uint64, 0, cfg.Insns)
	}
	var stack []uint64 // the program's own return addresses
	intPer := 0
	if cfg.EventRate > 0 {
		intPer = 1_000_000 / cfg.EventRate
	}
	nUser := len(p.secs[0].at)
	userInsns := p.insns
	for i := range p.insns {
		if p.insns[i].addr-p.Base >= uint64(nUser) {
			userInsns = p.insns[:i]
			break
		}
	}
	randomStart := func() uint64 { return userInsns[r.IntN(len(userInsns))].addr }
	var rets []uint64
	for i := range userInsns {
		if userInsns[i].kind == KindRet {
			rets = append(rets, userInsns[i].addr)
		}
	}
	inKernel := false
	var userIP uint64 // where the kernel returns to

	ip := randomStart()
	c.psb(ip) // tracing starts disabled: PSB+ without FUP
	c.enable(ip)
	ovfPer := 0
	if cfg.Overflows > 0 {
		ovfPer = 1_000_000 / cfg.Overflows
	}
	for n := 0; n < cfg.Insns; n++ {
		in := p.find(ip)
		if in == nil {
			return fmt.Errorf("ptgen: internal error: execution reached %#x, not an instruction", ip)
		}
		if c.drop {
			// The overflow resolves after its time, or before an
			// instruction that changes what is traced.
			if c.dropLeft--; c.dropLeft <= 0 || in.kind == KindSyscall || in.kind == KindFarRet || in.kind == KindPTWrite {
				c.resolve(ip)
			}
		}
		if !cfg.NoIPs && !c.drop {
			p.IPs = append(p.IPs, ip)
		}
		c.executed++
		p.Count++
		p.Stats.Executed[in.kind]++
		p.Stats.ExecClass[in.class]++
		c.tick(1 + r.IntN(3))
		next := ip + uint64(in.size)
		switch in.kind {
		case KindOther, KindCallNext:
			ip = next
		case KindJcc:
			taken := r.IntN(2) == 0
			c.tntBit(taken)
			if taken {
				ip = in.target
			} else {
				ip = next
			}
		case KindJmp:
			ip = in.target
		case KindCall:
			stack = append(stack, next)
			c.push(next)
			ip = in.target
			p.Stats.DeepestCall = max(p.Stats.DeepestCall, len(stack))
		case KindRet:
			var t uint64
			if len(stack) > 0 {
				t = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			} else {
				t = randomStart() // a return to an address the program stored: a longjmp
			}
			if c.retN > 0 {
				if c.ret[c.retTop] != t {
					return fmt.Errorf("ptgen: internal error: return stack top %#x, return to %#x", c.ret[c.retTop], t)
				}
				c.retTop = (c.retTop + retStackSize - 1) % retStackSize
				c.retN--
				c.tntBit(true)
				p.Stats.CompRet++
			} else {
				c.ipPacket(intelpt.KindTIP, t)
				p.Stats.UncompRet++
			}
			ip = t
		case KindJmpInd, KindCallInd:
			t := in.targets[r.IntN(len(in.targets))]
			if !inKernel && len(stack) > 512 && len(rets) > 0 && r.IntN(2) == 0 {
				t = rets[r.IntN(len(rets))] // keep the call depth bounded
			} else if !inKernel && cfg.MaxDepth > 0 && len(stack) > cfg.MaxDepth && len(rets) > 0 {
				t = rets[r.IntN(len(rets))] // to a ret: one frame fewer (a call: as many)
			}
			if in.kind == KindCallInd {
				stack = append(stack, next)
				c.push(next)
				p.Stats.DeepestCall = max(p.Stats.DeepestCall, len(stack))
			}
			c.ipPacket(intelpt.KindTIP, t)
			ip = t
		case KindPTWrite:
			// The payload is the operand's value; PTW is an event packet,
			// so the TNT bits before it go out first.
			c.flushTNT()
			c.cyc()
			pl := uint8(0)
			v := uint64(r.Uint32())
			if p.Code[ip-p.Base+1]&0xf8 == 0x48 { // REX.W: 64-bit operand
				pl, v = 1, r.Uint64()
			}
			flags := intelpt.Flags(0)
			if cfg.FUPOnPTW {
				flags = intelpt.FlagIP
			}
			c.emit(intelpt.Packet{Kind: intelpt.KindPTW, Bits: pl, Payload: v, Flags: flags})
			if cfg.FUPOnPTW {
				c.ipPacket(intelpt.KindFUP, ip)
			}
			ip = next
		case KindSyscall:
			if cfg.Kernel {
				c.ipPacket(intelpt.KindTIP, k.syscall)
				userIP, inKernel = next, true
				ip = k.syscall
				break
			}
			// The kernel is not traced: TIP.PGD with the IP suppressed
			// (it would be a kernel address), TIP.PGE at the return.
			c.disable()
			c.tick(200 + r.IntN(2000))
			c.maybePSB(next)
			ip = next
			c.enable(ip)
		case KindFarRet:
			c.ipPacket(intelpt.KindTIP, userIP)
			ip, inKernel = userIP, false
		}
		c.maybePSB(ip)
		if ovfPer > 0 && !c.drop && r.IntN(ovfPer) == 0 {
			c.overflow(1 + r.IntN(3000))
			continue
		}
		if intPer > 0 && !inKernel && !c.drop && r.IntN(intPer) == 0 && n+1 < cfg.Insns {
			// An interrupt: FUP at the next instruction (the one that
			// did not run yet), then the kernel.
			c.ipPacket(intelpt.KindFUP, ip)
			if cfg.Kernel {
				h := k.handlers[r.IntN(len(k.handlers))]
				c.ipPacket(intelpt.KindTIP, h)
				userIP, inKernel = ip, true
				ip = h
				c.maybePSB(ip)
				continue
			}
			// The kernel is not traced: TIP.PGD. It returns to the
			// same instruction, or (a signal) elsewhere.
			c.disable()
			c.tick(500 + r.IntN(5000))
			if r.IntN(4) == 0 {
				ip = randomStart()
			}
			c.maybePSB(ip)
			c.enable(ip)
		}
	}
	// The end: an interrupt into the kernel, where tracing was stopped.
	if c.drop {
		c.resolve(ip)
	}
	c.ipPacket(intelpt.KindFUP, ip)
	c.disable()
	p.Trace = c.out
	return nil
}

// String lists the statistics, one "name value" per line.
func (s *Stats) String() string {
	var b []byte
	for _, k := range intelpt.Kinds() {
		if n := s.Packets[k]; n > 0 {
			b = fmt.Appendf(b, "packets %v %d\n", k, n)
		}
	}
	ipcNames := [8]string{"suppressed", "update-16", "update-32", "sext-48", "update-48", "reserved-5", "full", "reserved-7"}
	for i, n := range s.IPC {
		if n > 0 {
			b = fmt.Appendf(b, "ipc %s %d\n", ipcNames[i], n)
		}
	}
	b = fmt.Appendf(b, "overflows %d\ntnt-bits %d\nret compressed %d\nret uncompressed %d\nret-stack overflows %d\ndeepest call %d\n", s.Packets[intelpt.KindOVF], s.TNTBits, s.CompRet, s.UncompRet, s.RetOverflow, s.DeepestCall)
	for k, n := range s.Executed {
		b = fmt.Appendf(b, "executed %v %d\n", Kind(k), n)
	}
	for c, n := range s.ExecClass {
		b = fmt.Appendf(b, "executed-class %v %d\n", Class(c), n)
	}
	return string(b)
}
