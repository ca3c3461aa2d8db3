#!/usr/bin/env bash
# bench/report-size.sh: the size of the HTML report of a large input. The
# page aggregates (bounded series, bounded numbers of charts), so its size
# must not grow with the input: docs/report.md states the bound.
#
#   bench/report-size.sh [SIZE_BYTES]      (default 1073741824)
#
# The input is a synthetic mmiotrace log shaped like a real e1000 probe
# capture (mmiotrace/internal/mmiogen), in a temporary directory removed at
# the end.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1073741824}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/iotap-report-size.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
go build -o "$tmp/iotap" ./cmd/iotap
go build -o "$tmp/mmiogen" ./mmiotrace/internal/mmiogen
"$tmp/mmiogen" -size "$SIZE" -o "$tmp/big.log"
in=$(stat -c %s "$tmp/big.log")
start=$(date +%s.%N)
"$tmp/iotap" report --allow-loss "$tmp/big.log" -o "$tmp/page.html" >/dev/null
end=$(date +%s.%N)
out=$(stat -c %s "$tmp/page.html")
charts=$(grep -o 'data-charts="[0-9]*"' "$tmp/page.html" | head -1)
echo "input: mmiotrace log, $in bytes"
echo "page:  $out bytes ($charts), written in $(echo "$end - $start" | bc) s"
