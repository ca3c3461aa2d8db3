#!/bin/sh
# bench/export.sh: Parquet export of a large mmiotrace log and a large
# usbmon pcapng, with the decode-only pass over the same input (iotap mmio
# stats / usb stats) in the same run as the reference: throughput per wall
# second and per CPU second, peak resident memory, Parquet size vs input.
#
#   bench/export.sh [MMIO_MB] [PCAPNG_MB]     (default 1024 400)
#
# The inputs repeat the bundled lab captures: the e1000 probe log
# (testdata/mmiotrace/e1000-probe.log) and the storage/HID capture
# (testdata/usbmon/lab-capture.pcapng, as pcapng sections) until they reach
# the size asked. Targets (issue 17): >= 100 MB/s of input, RSS < 200 MB.
set -eu
cd "$(dirname "$0")/.."
mmio_mb=${1:-1024}
usb_mb=${2:-400}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/iotap" ./cmd/iotap

grow() { # grow SAMPLE OUT MB
	: >"$2"
	while [ "$(stat -c %s "$2")" -lt $(($3 * 1024 * 1024)) ]; do
		cat "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1" >>"$2"
	done
}
grow testdata/mmiotrace/e1000-probe.log "$work/big.log" "$mmio_mb"
grow testdata/usbmon/lab-capture.pcapng "$work/big.pcapng" "$usb_mb"

# run NAME CMD...: wall s, CPU s (user+sys), peak RSS KB
run() {
	name=$1
	shift
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v n="$name" -v a="$t0" -v b="$t1" -v bytes="$bytes" '{ w = b - a; c = $1 + $2;
		printf "%-34s %8.2f %8.2f %10.1f %10.1f %8.0f\n", n, w, c, bytes / 1e6 / w, bytes / 1e6 / c, $3 / 1024 }' "$work/time"
}

printf "%-34s %8s %8s %10s %10s %8s\n" "" "wall s" "CPU s" "MB/s wall" "MB/CPU-s" "RSS MB"
bytes=$(stat -c %s "$work/big.log")
echo "mmiotrace log: $((bytes / 1000000)) MB"
run "iotap mmio stats (decode only)" "$work/iotap" mmio stats "$work/big.log"
rm -rf "$work/pq"
run "iotap export --parquet" "$work/iotap" export --parquet "$work/pq" "$work/big.log"
pq=$(du -sb "$work/pq" | cut -f1)
awk -v p="$pq" -v b="$bytes" 'BEGIN { printf "parquet: %.1f MB, %.1f%% of the input\n", p / 1e6, 100 * p / b }'

bytes=$(stat -c %s "$work/big.pcapng")
echo "pcapng: $((bytes / 1000000)) MB"
run "iotap usb stats (decode only)" "$work/iotap" usb stats "$work/big.pcapng"
rm -rf "$work/pq"
run "iotap export --parquet" "$work/iotap" export --parquet "$work/pq" "$work/big.pcapng"
pq=$(du -sb "$work/pq" | cut -f1)
awk -v p="$pq" -v b="$bytes" 'BEGIN { printf "parquet: %.1f MB, %.1f%% of the input\n", p / 1e6, 100 * p / b }'
