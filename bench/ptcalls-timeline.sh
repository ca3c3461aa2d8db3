#!/bin/sh
# Memory of the PT call track: `iotap timeline --pt-calls` on generated
# traces of M million instructions (default 10 and 40), wrapped in a
# perf.data (bench/ptwrap), one Perfetto file (--max-size 0). Prints CPU
# seconds (user+system), wall seconds and peak RSS (/usr/bin/time) per
# size, and the sizes of the perf.data and of the output.
#
#   bench/ptcalls-timeline.sh [M ...]
# Needs go.
set -eu
cd "$(dirname "$0")/.."
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/iotap" ./cmd/iotap
for M in ${*:-10 40}; do
	go run ./intelpt/internal/ptgen/cmd/ptgen -seed 1 -insns "${M}000000" -timing -o "$W/run" >"$W/gen.txt"
	BASE=$(awk '/^base/ {print $2}' "$W/gen.txt")
	go run ./bench/ptwrap -code "$W/run.bin" -base "$BASE" -pt "$W/run.pt" -o "$W/perf.data"
	/usr/bin/time -f "$M M instructions: %U+%S s CPU, %e s wall, %M KB peak RSS" \
		"$W/iotap" timeline --pt-calls --max-size 0 --allow-loss -o "$W/out.pftrace" "$W/perf.data" 2>&1 | tail -1
	echo "  perf.data $(stat -c %s "$W/perf.data") bytes, timeline $(stat -c %s "$W/out.pftrace") bytes"
done
