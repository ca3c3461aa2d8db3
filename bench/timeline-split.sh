#!/usr/bin/env bash
# bench/timeline-split.sh: 'iotap timeline' with the default --max-size
# (the overview of the whole capture plus the detail windows, each under
# 256 MiB) against the references of issue 20, on the same inputs, in one
# run:
#
#   a 1 GB mmiotrace log     vs  one gawk pass of the seed's filter
#                                (bench/mmio.sh's awk program)
#   a 400 MB usbmon pcapng   vs  tshark -r FILE -T fields -e frame.time_epoch
#
# For each: wall time, user+sys CPU time and peak memory (max RSS) of both,
# RUNS times (default 3) in alternation (reference, iotap, reference, ...);
# the medians are printed and the ratios are of the medians. CPU seconds
# are the figure to compare on a shared machine: wall time there depends
# on the other jobs.
#
#   [RUNS=N] bench/timeline-split.sh [MMIO_BYTES [PCAPNG_BYTES]]   (default 1000000000 400000000)
#
# The log is testdata/mmiotrace/e1000-probe.log (a real e1000 probe from the
# lab) repeated with shifted timestamps; the pcapng is a real USB capture
# (../shared/testdata/usb/km003c-adc-1000hz.pcapng, external test data)
# written again and again, each copy shifted (bench/bigcap). Inputs and
# outputs live in a temporary directory under $TMPDIR, removed at the end,
# also on error or Ctrl-C: about 2 GB for the inputs and 4 GB for the
# outputs at the default sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
MMIO_SIZE=${1:-1000000000}
PCAP_SIZE=${2:-400000000}
PCAP_SRC=../shared/testdata/usb/km003c-adc-1000hz.pcapng
RUNS=${RUNS:-3}
LO=0xfebc0000 HI=0xfebc0100

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iotap-timeline-split.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

go build -o "$tmp/iotap" ./cmd/iotap
go build -o "$tmp/bigcap" ./bench/bigcap

echo "cores: $(nproc); $(lscpu | sed -n 's/^Model name: *//p'); $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"

# med FILE: the run of FILE (lines of /usr/bin/time -f '%e %U %S %M') with
# the median CPU time, as "wall user sys rss"
med() {
  awk '{ print $2 + $3, $0 }' "$1" | sort -n | awk -v n="$(wc -l < "$1")" 'NR == int((n + 1) / 2) { print $2, $3, $4, $5 }'
}
# row NAME FILE: print the median run of FILE
row() {
  read -r wall user sys rss <<< "$(med "$2")"
  printf "%-34s %8.2f s wall %8.2f s CPU %8.1f MB max RSS  (median of %d)\n" "$1" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "$(wc -l < "$2")"
}
ratio() { # ratio LABEL REF_FILE IOTAP_FILE
  awk -v l="$1" -v a="$(med "$2")" -v b="$(med "$3")" 'BEGIN {
    split(a, x, " "); split(b, y, " ");
    printf "%s: reference/iotap = %.2fx wall, %.2fx CPU (medians)\n", l, x[1] / y[1], (x[2] + x[3]) / (y[2] + y[3]) }'
}

# 1. mmiotrace
"$tmp/bigcap" -mmio testdata/mmiotrace/e1000-probe.log -size "$MMIO_SIZE" -o "$tmp/big.log"
echo "log: $(stat -c %s "$tmp/big.log") bytes, $(wc -l < "$tmp/big.log") lines"
cat "$tmp/big.log" > /dev/null # same page-cache state for both
for _ in $(seq "$RUNS"); do
  /usr/bin/time -f '%e %U %S %M' -a -o "$tmp/gawk.time" \
    gawk "/W 4 / { adr=strtonum(\$5); if (adr >= $LO && adr < $HI) print; }" "$tmp/big.log" > /dev/null
  /usr/bin/time -f '%e %U %S %M' -a -o "$tmp/tl.time" \
    "$tmp/iotap" timeline "$tmp/big.log" -o "$tmp/mmio.pftrace" > "$tmp/tl.out"
done
row "gawk (the seed's filter)" "$tmp/gawk.time"
row "iotap timeline (overview+detail)" "$tmp/tl.time"
ratio "mmiotrace" "$tmp/gawk.time" "$tmp/tl.time"
sed -n '/^the full detail/,$p' "$tmp/tl.out"
rm -rf "$tmp/big.log" "$tmp/mmio.pftrace" "$tmp/mmio.d"

# 2. usbmon pcapng
if [ ! -f "$PCAP_SRC" ]; then
  echo "skip pcapng: $PCAP_SRC absent (external test data)"
  exit 0
fi
"$tmp/bigcap" -pcapng "$PCAP_SRC" -size "$PCAP_SIZE" -o "$tmp/big.pcapng"
echo "pcapng: $(stat -c %s "$tmp/big.pcapng") bytes"
cat "$tmp/big.pcapng" > /dev/null
for _ in $(seq "$RUNS"); do
  /usr/bin/time -f '%e %U %S %M' -a -o "$tmp/tshark.time" \
    tshark -r "$tmp/big.pcapng" -T fields -e frame.time_epoch > "$tmp/tshark.out" 2> /dev/null
  /usr/bin/time -f '%e %U %S %M' -a -o "$tmp/tlu.time" \
    "$tmp/iotap" timeline "$tmp/big.pcapng" -o "$tmp/usb.pcapng.pftrace" > "$tmp/tlu.out"
done
echo "frames: $(wc -l < "$tmp/tshark.out")"
row "tshark -T fields -e frame.time_epoch" "$tmp/tshark.time"
row "iotap timeline (overview+detail)" "$tmp/tlu.time"
ratio "pcapng" "$tmp/tshark.time" "$tmp/tlu.time"
sed -n '/^the full detail/,$p' "$tmp/tlu.out"
