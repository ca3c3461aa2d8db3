// Package calls rebuilds function call nesting per thread from Intel PT
// instruction flow: direct and indirect calls, returns (matched against
// the return address the call pushed), tail calls (a jump to another
// function's entry replaces its caller), returns and jumps that skip
// frames (longjmp, exceptions: the skipped calls end "unwound"), and gaps
// (overflow, decode errors, tracing disabled somewhere else than where it
// resumes) reported explicitly.
//
// Tracker is driven by blocks (the block flow decoder's unit: some
// instructions, the class of the last one, and where the next block
// starts); Decode runs intelpt's block decoder over a per-thread trace
// and feeds it. ProcSymbolizer names functions from the ELF files of a
// process's mappings (package symtab). The outputs (call tree, JSON,
// collapsed stacks) are in output.go.
//
// Tests synthesize the PT of a real PIE program linked against libc
// (intelpt/ptsynth single-steps it under ptrace) and compare the
// calls with the nesting the program's stack pointer shows, and with
// what its C source says.
package calls
