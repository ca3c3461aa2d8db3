#!/bin/sh
# x86 instruction length + class decoding: iotap's intelpt/x86 against
# golang.org/x/arch/x86/x86asm (v0.32.0) on the same code, in one run.
#
#   bench/x86len.sh [ELF]      (default /lib/x86_64-linux-gnu/libc.so.6)
#
# Walks the .text section with each decoder, each instruction decoded where
# the previous one ended (a serial walk, as a flow decoder walks code), and
# prints instructions per second of wall time and per second of the
# benchmark thread's CPU time (getrusage RUSAGE_THREAD: on a shared machine
# the CPU figure is the one to compare with a target), median of COUNT runs
# (default 5), and how many lengths x86asm gets wrong or fails on (iotap's
# lengths equal objdump's on every instruction: intelpt/x86's oracle tests).
# Rows: Decode (x86.Decode, the whole Inst), LenClass (x86.LenClass, length
# and class in registers; the walk uses both), LenClass64 (x86.LenClass64
# inlined into the walk, x86.LenClass where it declines), X86asm, and two floors:
# functions with Decode's and LenClass's signatures that look up one table,
# what calling any decoder once per instruction costs on this machine.
# x86asm is only a dependency of the separate module bench/x86len, not of
# iotap.
# With ROUNDS=N, it then walks the code with LenClass, LenClass64 and the
# LenClass floor in turn, N rounds in one process, and prints each one's
# median and 10th/90th percentiles and the per-round ratio LenClass64 /
# LenClass: the same moments for each, on a machine whose speed changes.
set -eu
cd "$(dirname "$0")/x86len"
COUNT=${COUNT:-5}
export X86LEN_ELF="${1:-/lib/x86_64-linux-gnu/libc.so.6}"
echo "code: $X86LEN_ELF .text; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
go test -run Agreement -v . | grep -E 'instructions:' | sed 's/^ *x86len_test.go:[0-9]*: //'
out=$(go test -run '^$' -bench . -benchtime 20x -count "$COUNT" . |
	awk '/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	       for (i = 1; i < NF; i++) if ($(i+1) ~ /^insn\//) print name, $(i+1), $i }')
for name in Decode LenClass LenClass64 X86asm Floor FloorLenClass; do
	for unit in insn/s insn/cpu-s; do
		echo "$out" | awk -v n="$name" -v u="$unit" '$1 == n && $2 == u { print $3 }' | sort -g |
			awk -v n="$name" -v u="$unit" '{ v[NR] = $1 } END { printf "%-13s %-11s median %7.1f M (runs:", n, u, v[int((NR+1)/2)] / 1e6
				for (i = 1; i <= NR; i++) printf " %.1f", v[i] / 1e6; print ")" }'
	done
done
if [ -n "${ROUNDS:-}" ]; then
	X86LEN_ROUNDS=$ROUNDS go test -count=1 -run Interleaved -v . | grep -E 'insn/cpu-s|per round' | sed 's/^ *x86len_test.go:[0-9]*: //'
fi
