#!/bin/sh
# Intel PT instruction flow: `iotap pt flow` against libipt's pt_insn_next
# and pt_blk_next loops (C, -O2, bench/ptflow) on the same trace and image,
# whole process, in one run.
#
#   bench/ptflow.sh [MINSNS]      executed instructions in millions (default 30)
#
# The code and trace are made by the ground-truth generator
# (intelpt/internal/ptgen: random x86-64 code with VEX/EVEX, every kind of
# branch, compressed returns, PSB+ every 4 KiB, MTC and TSC). Both sides
# print only statistics (ptxed's --quiet --stat format: "insn: N." and
# "blocks: N."), so the comparison is decoding, not printing; the script
# checks that both count the same instructions. Each command runs N times
# (default 5), alternating; the best wall time, the best CPU time (user +
# system: steadier than wall time on a shared machine) and the peak RSS are
# kept.
# Needs go, gcc and libipt-dev.
set -eu
cd "$(dirname "$0")/.."
M=${1:-30}
N=${N:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

gcc -O2 -o "$W/ptflow" bench/ptflow/ptflow.c -lipt
go build -o "$W/iotap" ./cmd/iotap
go run ./intelpt/internal/ptgen/cmd/ptgen -seed 1 -insns "${M}000000" -timing -o "$W/run" >"$W/gen.txt"
BASE=$(awk '/^base/ {print $2}' "$W/gen.txt")
RAW="$W/run.bin:$BASE"
echo "trace: $(stat -c %s "$W/run.pt") bytes, $(awk '/^insns/ {print $2}' "$W/gen.txt") instructions, code $(stat -c %s "$W/run.bin") bytes at $BASE"
echo "best of $N alternating runs (wall seconds, CPU seconds, peak RSS)"

# measure NAME CMD...: run CMD, keep its output in $W/NAME.out, and the best
# wall time, the largest RSS and the best CPU time in $W/NAME.best.
measure() {
	name=$1
	shift
	/usr/bin/time -f '%e %M %U %S' -o "$W/time" "$@" >"$W/$name.out" 2>"$W/$name.err" || echo "WARNING: $name exited with an error" >&2
	set -- $(tail -n 1 "$W/time")
	cpu=$(awk -v u="$3" -v s="$4" 'BEGIN { print u + s }')
	if [ -f "$W/$name.best" ]; then
		set -- $1 $2 $cpu $(cat "$W/$name.best")
		awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" -v e="$5" -v f="$6" 'BEGIN { printf "%s %s %s\n", (a < d ? a : d), (b > e ? b : e), (c < f ? c : f) }' >"$W/$name.best"
	else
		echo "$1 $2 $cpu" >"$W/$name.best"
	fi
}

HAVE_FLOW=0
"$W/iotap" pt flow --help 2>/dev/null | grep -q -e --insn-decoder && HAVE_FLOW=1
i=0
while [ "$i" -lt "$N" ]; do
	measure c-insn "$W/ptflow" insn stat "$W/run.pt" "$RAW"
	measure c-block "$W/ptflow" block stat "$W/run.pt" "$RAW"
	if [ "$HAVE_FLOW" = 1 ]; then
		measure go-insn "$W/iotap" pt flow --insn-decoder --quiet --stat --raw "$RAW" --pt "$W/run.pt"
		measure go-block "$W/iotap" pt flow --block-decoder --quiet --stat --raw "$RAW" --pt "$W/run.pt"
	fi
	i=$((i + 1))
done

show() {
	set -- "$1" "$2" $(cat "$W/$2.best")
	printf '%-46s %7.2f s %7.2f s %8d KiB   %s\n' "$1" "$3" "$5" "$4" "$(tr '\n\t' '  ' <"$W/$2.out")"
}
show "libipt pt_insn_next loop (C -O2)" c-insn
show "libipt pt_blk_next loop (C -O2)" c-block
for f in c-insn c-block; do
	[ -s "$W/$f.err" ] && { echo "WARNING: $f reported errors:"; head -3 "$W/$f.err"; }
done
if [ "$HAVE_FLOW" = 0 ]; then
	echo "iotap pt flow: not available in this build"
	exit 0
fi
show "iotap pt flow --insn-decoder --quiet --stat" go-insn
show "iotap pt flow --block-decoder --quiet --stat" go-block
grep -h '^insn' "$W/c-insn.out" "$W/go-insn.out" "$W/c-block.out" "$W/go-block.out" | sort -u | awk 'END { if (NR != 1) print "WARNING: the instruction counts differ" }'
for f in go-insn go-block; do
	[ -s "$W/$f.err" ] && { echo "WARNING: $f wrote to stderr:"; head -3 "$W/$f.err"; }
done
awk -v ci="$(cut -d' ' -f1 "$W/c-insn.best")" -v gi="$(cut -d' ' -f1 "$W/go-insn.best")" \
	-v cb="$(cut -d' ' -f1 "$W/c-block.best")" -v gb="$(cut -d' ' -f1 "$W/go-block.best")" \
	-v cci="$(cut -d' ' -f3 "$W/c-insn.best")" -v cgi="$(cut -d' ' -f3 "$W/go-insn.best")" \
	-v ccb="$(cut -d' ' -f3 "$W/c-block.best")" -v cgb="$(cut -d' ' -f3 "$W/go-block.best")" 'BEGIN {
	printf "per-instruction: iotap is %.2fx pt_insn_next (wall), %.2fx (CPU)\n", ci / gi, cci / cgi
	printf "per-block:       iotap is %.2fx pt_blk_next (wall), %.2fx (CPU)\n", cb / gb, ccb / cgb
}'
