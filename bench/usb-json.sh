#!/bin/bash
# bench/usb-json.sh: iotap usb read --json against tshark -T fields with the
# same fields (docs/ndjson.md usb_event: frame number, timestamp, relative
# time, URB id and type, transfer type, bus, device, endpoint address,
# status, lengths, payload, latency, request frame), whole processes in
# turn, N runs each (default 3); prints medians of user+sys CPU and wall
# seconds and the ratio tshark/iotap (target: >= 50x).
#
#   bash bench/usb-json.sh    (KM003C=FILE, N=runs)
#
# Input: 40 copies of km003c-adc-1000hz.pcapng, each shifted by 20 s
# (editcap -t) and merged (mergecap): 138,320 events.
set -euo pipefail
cd "$(dirname "$0")/.."
km=${KM003C:-../shared/testdata/usb/km003c-adc-1000hz.pcapng}
runs=${N:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# iotap as README installs it: static (CGO_ENABLED=0; nothing in iotap
# uses cgo, and the cgo-linked default build starts slower:
# docs/performance.md). CGO_ENABLED=1 measures the default build.
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/iotap" ./cmd/iotap
mkdir -p "$work/parts"
for i in $(seq 0 39); do editcap -t $((i * 20)) "$km" "$work/parts/p$i.pcapng"; done
big=$work/km40.pcapng
mergecap -w "$big" "$work/parts"/p*.pcapng
rm -rf "$work/parts"
fields="-e frame.number -e frame.time_epoch -e frame.time_relative -e usb.urb_id -e usb.urb_type -e usb.transfer_type -e usb.bus_id -e usb.device_address -e usb.endpoint_address -e usb.urb_status -e usb.urb_len -e usb.data_len -e usb.capdata -e usb.time -e usb.request_in"
n=$("$work/iotap" usb read --json "$big" | grep -c '"kind":"usb_event"')
t=$(tshark -r "$big" -T fields -e frame.number 2>/dev/null | wc -l)
echo "input: $(stat -c %s "$big") bytes, $n events (tshark: $t); $runs runs each, in turn"
: >"$work/a" ; : >"$work/b"
# CPU seconds from wait4 (bench/cputime.py: microseconds, no shell in
# between; /usr/bin/time prints hundredths)
for _ in $(seq "$runs"); do
	python3 -S bench/cputime.py "$work/a" "$work/iotap usb read --json $big"
	python3 -S bench/cputime.py "$work/b" "tshark -r $big -T fields $fields"
done
med() { awk -v c="$2" '{ v[NR] = (c == "cpu") ? $1 : $2 } END { n = asort(v); print v[int((n + 1) / 2)] }' "$1"; }
awk -v ac="$(med "$work/a" cpu)" -v aw="$(med "$work/a" wall)" -v bc="$(med "$work/b" cpu)" -v bw="$(med "$work/b" wall)" 'BEGIN {
	if (ac < 0.0005) ac = 0.0005
	printf "iotap usb read --json  %7.4f s CPU %6.2f s wall\n", ac, aw
	printf "tshark -T fields       %7.4f s CPU %6.2f s wall\n", bc, bw
	printf "ratio: tshark/iotap %.1fx CPU, %.1fx wall (target >= 50x)\n", bc / ac, bw / aw
}'
