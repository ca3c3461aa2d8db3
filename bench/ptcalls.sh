#!/bin/sh
# Intel PT function calls: `iotap pt calls` against libipt's pt_blk_next
# loop alone (C, -O2, bench/ptflow) on the same trace and image, whole
# process (issue 14's speed target: pt calls at least as fast as libipt's
# block decoder).
#
#   bench/ptcalls.sh [MINSNS]      executed instructions in millions (default 30)
#
# The code and trace are made by the ground-truth generator (see
# bench/ptflow.sh). iotap builds the call tree (`--quiet`: nothing printed;
# the raw code has no symbols, so every function is an unknown address);
# libipt only counts blocks. The two run in turn, A B A B ..., N pairs
# (default 9) after one warm-up each; the script prints the median CPU
# seconds (user + system, from /usr/bin/time: on a shared machine CPU time
# is what can be compared, wall time mostly measures waiting for a core),
# the median wall seconds and the peak RSS of each, and the median and range
# of the pairwise CPU ratios iotap/libipt (below 1: iotap is faster).
# Needs go, gcc and libipt-dev. IOTAP=path uses that iotap binary instead
# of building one (to compare builds).
set -eu
cd "$(dirname "$0")/.."
M=${1:-30}
N=${N:-9}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

gcc -O2 -o "$W/ptflow" bench/ptflow/ptflow.c -lipt
if [ -n "${IOTAP:-}" ]; then
	cp "$IOTAP" "$W/iotap"
else
	go build -o "$W/iotap" ./cmd/iotap
fi
go run ./intelpt/internal/ptgen/cmd/ptgen -seed 1 -insns "${M}000000" -timing -o "$W/run" >"$W/gen.txt"
BASE=$(awk '/^base/ {print $2}' "$W/gen.txt")
echo "trace: $(stat -c %s "$W/run.pt") bytes, $(awk '/^insns/ {print $2}' "$W/gen.txt") instructions; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# run NAME CMD...: one run; appends "cpu wall rss" to $W/NAME.t.
run() {
	name=$1
	shift
	/usr/bin/time -f '%U %S %e %M' -o "$W/time" "$@" >"$W/$name.out" 2>"$W/$name.err" || {
		echo "$name failed:" >&2
		cat "$W/$name.err" >&2
		exit 1
	}
	awk '{ printf "%.3f %s %s\n", $1 + $2, $3, $4 }' "$W/time" >>"$W/$name.t"
}
A() { run "$1" "$W/iotap" pt calls --quiet --allow-loss --raw "$W/run.bin:$BASE" "$W/run.pt"; }
B() { run "$1" "$W/ptflow" block stat "$W/run.pt" "$W/run.bin:$BASE"; }

A warm
B warm
i=0
while [ "$i" -lt "$N" ]; do
	A iotap
	B libipt
	i=$((i + 1))
done
grep -q "insn: ${M}000000" "$W/libipt.out" || echo "WARNING: libipt counted $(cat "$W/libipt.out")"
"$W/iotap" pt calls --allow-loss --raw "$W/run.bin:$BASE" "$W/run.pt" 2>&1 >/dev/null | tail -n 1

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for f in iotap libipt; do
	printf '%-7s CPU s median %s, wall s median %s, peak RSS %s KiB\n' "$f" \
		"$(cut -d' ' -f1 "$W/$f.t" | median)" "$(cut -d' ' -f2 "$W/$f.t" | median)" "$(cut -d' ' -f3 "$W/$f.t" | sort -n | tail -n 1)"
done
paste -d' ' "$W/iotap.t" "$W/libipt.t" | awk '{ print $1 / $4 }' | sort -g >"$W/ratio"
echo "iotap/libipt CPU, pairwise: median $(median <"$W/ratio") (min $(head -n 1 "$W/ratio"), max $(tail -n 1 "$W/ratio")) over $N pairs"
