#!/bin/sh
# bench/usb.sh: decode the same large usbmon pcapng with tshark and with
# iotap in one run and print the ratio (target: iotap >= 50x faster).
#
#   bench/usb.sh [SIZE_MB]     (default 100)
#
# The input is the lab capture testdata/usbmon/lab-capture.pcapng (storage
# bulk transfers, HID interrupts, an enumeration) repeated as pcapng
# sections until it reaches SIZE_MB. tshark prints the usbmon header fields
# (-T fields); iotap converts every event to the kernel's 1u text, which
# decodes the same header fields and formats them.
set -eu
cd "$(dirname "$0")/.."
size_mb=${1:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v tshark >/dev/null || { echo "bench/usb.sh: tshark missing (apt-get install tshark)" >&2; exit 1; }
go build -o "$work/iotap" ./cmd/iotap

sample=testdata/usbmon/lab-capture.pcapng
big=$work/big.pcapng
: >"$big"
while [ "$(stat -c %s "$big")" -lt $((size_mb * 1024 * 1024)) ]; do
	cat "$sample" "$sample" "$sample" "$sample" "$sample" "$sample" "$sample" "$sample" >>"$big"
done
bytes=$(stat -c %s "$big")

now() { date +%s.%N; }
# Each tool runs $RUNS times (default 3); the best run counts. Both wall
# time and CPU time (user+system, from /usr/bin/time) are reported: the
# machine is shared, and CPU time is what the decoding itself costs.
runs=${RUNS:-3}
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
cpu() { awk '{ print $1 + $2 }' "$1"; }
ts=""; io=""; tc=""; ic=""
i=0
while [ "$i" -lt "$runs" ]; do
	t0=$(now)
	/usr/bin/time -f "%U %S" -o "$work/tshark.time" tshark -r "$big" -T fields -e usb.urb_id -e usb.urb_type \
		-e usb.transfer_type -e usb.endpoint_address -e usb.device_address -e usb.bus_id \
		-e usb.urb_status -e usb.urb_len -e usb.data_len >"$work/tshark.out" 2>/dev/null
	t1=$(now)
	/usr/bin/time -f "%U %S" -o "$work/iotap.time" "$work/iotap" usb convert --format 1u "$big" -o /dev/null 2>"$work/iotap.err"
	t2=$(now)
	ts=$(best "$ts" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
	io=$(best "$io" "$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')")
	tc=$(best "$tc" "$(cpu "$work/tshark.time")")
	ic=$(best "$ic" "$(cpu "$work/iotap.time")")
	i=$((i + 1))
done

events=$(sed -n 's/^iotap: converted \([0-9]*\) events.*/\1/p' "$work/iotap.err")
tshark_lines=$(wc -l <"$work/tshark.out")
[ "$events" = "$tshark_lines" ] || { echo "bench/usb.sh: iotap read $events events, tshark $tshark_lines" >&2; exit 1; }

awk -v b="$bytes" -v n="$events" -v ts="$ts" -v io="$io" -v tc="$tc" -v ic="$ic" -v runs="$runs" 'BEGIN {
	if (ic < 0.01) ic = 0.01  # /usr/bin/time resolution
	printf "input: %.1f MB pcapng, %d events; best of %d runs each\n", b / 1e6, n, runs
	printf "%-28s %8s %8s %14s\n", "", "wall s", "CPU s", "events/CPU-s"
	printf "%-28s %8.3f %8.2f %14.0f\n", "tshark -T fields", ts, tc, n / tc
	printf "%-28s %8.3f %8.2f %14.0f\n", "iotap usb convert --format 1u", io, ic, n / ic
	printf "ratio (CPU time): iotap is %.0fx faster than tshark; wall time: %.0fx (target >= 50x)\n", tc / ic, ts / io
}'
