#!/bin/sh
# bench/cut.sh: extract a 1-second window from a large usbmon pcapng with
# iotap cut (using the index written by iotap index) and with tshark's
# display filter, in one run, and print the ratios (target: >= 100x).
#
#   bench/cut.sh [SIZE] [SECONDS]     (default: 2G spanning 200 s)
#
# The input is the lab capture testdata/usbmon/lab-capture.pcapng, its
# packets repeated with evenly spaced timestamps (bench/cutgen) until the
# file holds SIZE bytes, with interface statistics every 64 MiB. The window
# is [100 s, 101 s) from the first packet for both tools:
#   tshark -r BIG -Y 'frame.time_relative >= 100 && frame.time_relative < 101' -w OUT
#   iotap cut --from 100 --to 101 BIG -o OUT
# Both outputs are checked to hold the same packets (tshark -T fields).
# WORK=DIR keeps the files in DIR (default: a temporary directory, removed).
set -eu
cd "$(dirname "$0")/.."
size=${1:-2G}
secs=${2:-200}
command -v tshark >/dev/null || { echo "bench/cut.sh: tshark missing (apt-get install tshark)" >&2; exit 1; }
if [ -n "${WORK:-}" ]; then
	work=$WORK
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
go build -o "$work/iotap" ./cmd/iotap
big=$work/big.pcapng
[ -s "$big" ] || go run ./bench/cutgen -size "$size" -seconds "$secs" -o "$big"
bytes=$(stat -c %s "$big")
/usr/bin/time -f "%e %U %S %M" -o "$work/index.time" "$work/iotap" index "$big"
read -r iw iu is im <"$work/index.time"
echo "iotap index: ${iw}s wall, $(echo "$iu $is" | awk '{print $1+$2}')s CPU, ${im} KB max RSS; index $(stat -c %s "$big.iotapidx") bytes"

runs=${RUNS:-3}
i=0
: >"$work/iotap.times"
: >"$work/tshark.times"
while [ "$i" -lt "$runs" ]; do
	/usr/bin/time -f "%e %U %S %M" -a -o "$work/iotap.times" \
		"$work/iotap" cut --allow-loss --from 100 --to 101 "$big" -o "$work/iotap.pcapng" 2>"$work/iotap.err"
	/usr/bin/time -f "%e %U %S %M" -a -o "$work/tshark.times" \
		tshark -r "$big" -Y 'frame.time_relative >= 100 && frame.time_relative < 101' -w "$work/tshark.pcapng" 2>/dev/null
	i=$((i + 1))
done
cat "$work/iotap.err"
fields() { tshark -r "$1" -T fields -e frame.time_epoch -e frame.len -e usb.urb_id 2>/dev/null; }
fields "$work/iotap.pcapng" >"$work/iotap.fields"
fields "$work/tshark.pcapng" >"$work/tshark.fields"
if ! cmp -s "$work/iotap.fields" "$work/tshark.fields"; then
	echo "bench/cut.sh: the two cuts differ" >&2
	exit 1
fi
pk=$(wc -l <"$work/iotap.fields")
# Best run of each (the machine is shared); CPU = user + system.
best() { sort -n -k"$2" "$1" | head -1; }
awk -v bytes="$bytes" -v pk="$pk" -v runs="$runs" '
	FNR == 1 { f++ }
	{ w = $1; c = $2 + $3; if (!(f in bw) || w < bw[f]) bw[f] = w; if (!(f in bc) || c < bc[f]) bc[f] = c; if ($4 > rss[f]) rss[f] = $4 }
	END {
		printf "input %.2f GB, window 1 s = %d packets, best of %d runs\n", bytes / 1e9, pk, runs
		printf "%-8s %10s %10s %10s\n", "", "wall s", "CPU s", "max RSS KB"
		printf "%-8s %10.3f %10.3f %10d\n", "iotap", bw[1], bc[1], rss[1]
		printf "%-8s %10.3f %10.3f %10d\n", "tshark", bw[2], bc[2], rss[2]
		printf "ratio    wall %.0fx, CPU %.0fx\n", bw[2] / bw[1], bc[2] / (bc[1] > 0 ? bc[1] : 0.01)
	}' "$work/iotap.times" "$work/tshark.times"
