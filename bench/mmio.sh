#!/usr/bin/env bash
# bench/mmio.sh: iotap mmio filter against the mmiotrace documentation's own
# awk filter (run with gawk) on the same >=1 GB log, in one run, and a
# one-core full-parse measurement of the Reader.
#
#   bench/mmio.sh [SIZE_BYTES]      (default 1100000000)
#
# With IOTAP_BASE=/path/to/another/iotap (e.g. built from an older commit)
# that binary is measured too, right after iotap, in the same run.
#
# The log is synthetic but shaped like a real e1000 probe capture
# (mmiotrace/internal/mmiogen). It lives in a temporary directory that is
# removed at the end, also on error or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1100000000}
LO=0xfebc0000 HI=0xfebc0100   # first 256 bytes of the NIC's BAR0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iotap-mmio-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

go build -o "$tmp/iotap" ./cmd/iotap
go build -o "$tmp/mmiogen" ./mmiotrace/internal/mmiogen
"$tmp/mmiogen" -size "$SIZE" -o "$tmp/big.log"
bytes=$(stat -c %s "$tmp/big.log")
cat "$tmp/big.log" > /dev/null   # same page-cache state for both tools

now() { date +%s.%N; }
mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }

echo "log: $bytes bytes, $(wc -l < "$tmp/big.log") lines; cores: $(nproc); $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. The seed's awk filter, with gawk.
t0=$(now)
/usr/bin/time -f '%U %S' -o "$tmp/awk.cpu" \
  gawk "/W 4 / { adr=strtonum(\$5); if (adr >= $LO && adr < $HI) print; }" "$tmp/big.log" > "$tmp/awk.out"
t1=$(now)
awk_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

# 2. iotap mmio filter, same meaning, all cores.
t0=$(now)
/usr/bin/time -f '%U %S' -o "$tmp/iotap.cpu" \
  "$tmp/iotap" mmio filter --write --width 4 --addr "$LO-$HI" "$tmp/big.log" -o "$tmp/iotap.out"
t1=$(now)
iotap_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

if [ -n "${IOTAP_BASE:-}" ]; then
  t0=$(now)
  /usr/bin/time -f '%U %S' -o "$tmp/base.cpu" \
    "$IOTAP_BASE" mmio filter --write --width 4 --addr "$LO-$HI" "$tmp/big.log" -o "$tmp/base.out"
  t1=$(now)
  base_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  cmp "$tmp/iotap.out" "$tmp/base.out"
fi

# 3. Same output: iotap = awk's lines plus the structural records it keeps.
struct='^(VERSION|PCIDEV|LSPCI|MAP|UNMAP) '
grep -Ev "$struct" "$tmp/iotap.out" | cmp - "$tmp/awk.out"
grep -E "$struct" "$tmp/big.log" | cmp - <(grep -E "$struct" "$tmp/iotap.out")
echo "output: identical to awk line for line ($(wc -l < "$tmp/awk.out") lines) plus $(grep -cE "$struct" "$tmp/iotap.out") VERSION/PCIDEV/MAP/UNMAP lines"

cpu() { awk '{ print $1 + $2 }' "$1"; }
echo "gawk:  $awk_s s wall ($(mbps "$awk_s") MB/s), $(cpu "$tmp/awk.cpu") s CPU"
echo "iotap: $iotap_s s wall ($(mbps "$iotap_s") MB/s), $(cpu "$tmp/iotap.cpu") s CPU"
awk -v a="$awk_s" -v b="$iotap_s" 'BEGIN { printf "ratio (wall): %.1fx\n", a / b }'
# On a shared machine the wall ratio depends on the CPU each tool got; the
# CPU ratio does not (iotap uses every core, so on an idle machine the wall
# ratio is up to the core count times it).
awk -v a="$(cpu "$tmp/awk.cpu")" -v b="$(cpu "$tmp/iotap.cpu")" 'BEGIN { printf "ratio (CPU): %.1fx\n", a / b }'
if [ -n "${IOTAP_BASE:-}" ]; then
  echo "base:  $base_s s wall ($(mbps "$base_s") MB/s), $(cpu "$tmp/base.cpu") s CPU"
  awk -v a="$awk_s" -v b="$base_s" 'BEGIN { printf "base ratio (wall): %.1fx\n", a / b }'
fi

# 4. Full parse of every record on one core.
t0=$(now)
/usr/bin/time -f '%U %S' -o "$tmp/parse.cpu" \
  taskset -c 0 env GOMAXPROCS=1 "$tmp/iotap" mmio read --check "$tmp/big.log" > "$tmp/parse.out"
t1=$(now)
parse_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
parse_cpu=$(cpu "$tmp/parse.cpu")
echo "full parse, one core: $parse_s s wall ($(mbps "$parse_s") MB/s), $parse_cpu s CPU ($(mbps "$parse_cpu") MB/s of CPU time)"
if [ -n "${IOTAP_BASE:-}" ]; then
  t0=$(now)
  /usr/bin/time -f '%U %S' -o "$tmp/bparse.cpu" \
    taskset -c 0 env GOMAXPROCS=1 "$IOTAP_BASE" mmio read --check "$tmp/big.log" > "$tmp/bparse.out"
  t1=$(now)
  bparse_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  cmp "$tmp/parse.out" "$tmp/bparse.out"
  echo "base full parse, one core: $bparse_s s wall ($(mbps "$bparse_s") MB/s), $(cpu "$tmp/bparse.cpu") s CPU"
fi
