// Package ptsynth makes Intel PT traces of real programs without PT
// hardware, for tests: Record runs a program under ptrace and single-steps
// it, recording every instruction and the address space (/proc/PID/maps);
// Encode writes the PT trace a CPU tracing user mode would have written for
// that run (PSB+, TNT for conditional branches and compressed returns, TIP
// for indirect branches, TIP.PGD/TIP.PGE around system calls); PerfData
// wraps trace and sideband (COMM, MMAP2, ITRACE_START, AUXTRACE, AUX,
// EXIT, build-ids) in a perf.data file. It is a test tool, not part of the
// iotap binary.
package ptsynth
