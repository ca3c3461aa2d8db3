// Package ptgen generates ground truth for Intel PT flow decoders: a random
// x86-64 program, the PT trace a CPU writes for one run of it, and the
// instructions that really ran.
//
// The program is straight-line code of many encoding families (legacy,
// REX, SSE with mandatory prefixes, 0F38, 0F3A, x87, VEX2, VEX3, EVEX, with
// segment, address-size and operand-size prefixes) cut into blocks that end
// in branches: conditional (jcc rel8/rel32, loop, jrcxz), direct jumps and
// calls, call-next/pop, returns (ret, ret imm16, rep ret, bnd ret),
// indirect jumps and calls, ptwrite and syscall. With Config.Kernel a second
// section holds kernel code: a syscall entry ending in sysretq, interrupt
// handlers ending in iretq, and leaf functions they call. The run is a
// random walk: the walk picks conditional outcomes, indirect targets and
// interrupts.
//
// The trace follows the rules of the Intel SDM (volume 3, "Intel Processor
// Trace") for a CPU that traces user code only: TNT bits, short and long,
// flushed before any other control-flow packet; returns compressed into a
// TNT bit while the 64-entry return stack holds the call (the stack is
// cleared at every PSB and drops its oldest entry when full), a TIP
// otherwise; TIP for indirect branches with any IP compression that
// reproduces the target from the last IP (the last IP is reset at PSB);
// TIP.PGD with the IP suppressed on syscall and interrupts, TIP.PGE (after
// MODE.Exec when none was sent since the PSB) on the way back; FUP at the
// interrupted instruction; with kernel tracing, TIP for syscall, sysretq and
// iretq and FUP+TIP for interrupts; PTW (and FUP with FUPOnPTW) for
// ptwrite, after the pending TNT bits; PSB+ each time the trace grows by PSBPeriod
// bytes, with TSC, TMA, CBR, MODE.Exec and FUP as a CPU writes them; MTC
// and CYC when asked; with Config.Overflows, internal buffer overflows: the
// pending TNT bits and the packets of the next instructions are lost, then
// OVF and a FUP (sext-48 or full: decoders reset the last IP at OVF) say
// where tracing resumes, with the return stack cleared. Program.IPs then
// holds what a decoder can reconstruct (it stops at the last instruction
// whose packets were written) and Program.Gaps where instructions were lost.
//
// libipt's pt_insn_next and pt_blk_next reproduce the true instruction
// sequence from the code and the trace (see the tests): this is what makes
// the generator an oracle for iotap's own flow decoder. The command in
// cmd/ptgen writes the files for benchmarks.
package ptgen
