#!/bin/sh
# Intel PT packet decoding: iotap's Go decoder against libipt's pt_pkt_next
# loop (C, -O2, bench/ptpkt) on the same trace, in one run.
#
#   bench/pt.sh [MB]      trace size in MiB (default 64)
#
# The trace is made by iotap's encoder (a realistic mix: TNT, compressed
# TIP, CYC/MTC, PSB+ every 4 KiB). Needs go, gcc and libipt-dev.
# With PTDUMP=/path/to/ptdump (built from the intel/libipt sources, outside
# this repository) it also times `ptdump FILE` against `iotap pt dump FILE`
# and checks that both print the same bytes.
set -eu
cd "$(dirname "$0")/.."
MB=${1:-64}
N=${N:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

now() { date +%s%N; }

gcc -O2 -o "$W/ptpkt" bench/ptpkt/ptpkt.c -lipt
go build -o "$W/iotap" ./cmd/iotap
IOTAP_PT_BENCH_OUT="$W/trace.pt" IOTAP_PT_BENCH_MB="$MB" go test -count=1 -run '^TestWriteBenchTrace$' ./intelpt >/dev/null
go test -c -o "$W/intelpt.test" ./intelpt
SIZE=$(stat -c %s "$W/trace.pt")
echo "trace: $SIZE bytes, best of $N alternating passes"

# Alternate the two decoders N times and keep each one's best pass: the
# machine is shared, the minimum is the least disturbed measurement.
C_NS=0; GO_NS=0
i=0
while [ "$i" -lt "$N" ]; do
	set -- $("$W/ptpkt" bench "$W/trace.pt" 1)
	C_PACKETS=$2
	if [ "$C_NS" = 0 ] || [ "$6" -lt "$C_NS" ]; then C_NS=$6; fi
	GO_OUT=$(IOTAP_PT_BENCH_FILE="$W/trace.pt" "$W/intelpt.test" -test.run '^$' -test.bench '^BenchmarkDecodeFile$' -test.benchtime 1x -test.benchmem | grep '^BenchmarkDecodeFile')
	g=$(echo "$GO_OUT" | awk '{print $3}')
	if [ "$GO_NS" = 0 ] || [ "$g" -lt "$GO_NS" ]; then GO_NS=$g; fi
	i=$((i + 1))
done
GO_PACKETS=$(echo "$GO_OUT" | awk '{for (i=1;i<=NF;i++) if ($i=="packets") print $(i-1)}')
GO_ALLOCS=$(echo "$GO_OUT" | awk '{for (i=1;i<=NF;i++) if ($i=="allocs/op") print $(i-1)}')
[ "$C_PACKETS" = "$GO_PACKETS" ] || echo "WARNING: packet counts differ: libipt $C_PACKETS, iotap $GO_PACKETS"
awk -v c="$C_NS" -v g="$GO_NS" -v p="$C_PACKETS" -v s="$SIZE" -v a="$GO_ALLOCS" 'BEGIN {
	printf "libipt pt_pkt_next: %8.1f ms  %6.1f MB/s  %5.1f ns/packet (best pass)\n", c/1e6, s/(c/1e9)/1e6, c/p
	printf "iotap Decoder.Next: %8.1f ms  %6.1f MB/s  %5.1f ns/packet (best pass)  %s allocs/pass\n", g/1e6, s/(g/1e9)/1e6, g/p, a
	printf "packet decoding: iotap is %.2fx libipt (%d packets)\n", c/g, p
}'

if [ -n "${PTDUMP:-}" ]; then
	t0=$(now); "$PTDUMP" "$W/trace.pt" >"$W/ptdump.txt"; t1=$(now)
	"$W/iotap" pt dump "$W/trace.pt" >"$W/iotap.txt"; t2=$(now)
	if cmp -s "$W/ptdump.txt" "$W/iotap.txt"; then same=identical; else same=DIFFERENT; fi
	awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) -v s="$same" 'BEGIN {
		printf "ptdump:         %8.1f ms\niotap pt dump:  %8.1f ms\ndump: iotap is %.2fx ptdump (outputs %s)\n", a/1e6, b/1e6, a/b, s
	}'
fi
