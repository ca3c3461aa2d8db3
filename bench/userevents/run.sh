#!/bin/sh
# User_events write cost: Go (Event.Write, Typed.Write, a bare writev from
# Go) against the C reference bench/userevents/writev.c, all writing the
# same enabled event in ONE lab guest run (QEMU, Linux 6.12, one vCPU), alternated
# five times, best of each; prints ns/op and the Go/C ratios. Then the
# host microbenchmarks (the host kernel has no user_events: /dev/null
# stands in for user_events_data).
set -e
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
IOTAP_UE_CPUS=1 IOTAP_UE_RUN='^TestLabPerf$' IOTAP_UE_GOLDEN="$out" go test -count=1 -run '^TestVM$' ./userevents >/dev/null
echo "== lab guest (TCG), one run"
cat "$out/perf.txt"
rm -rf "$out"
echo "== host"
echo "loadavg $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
go test -count=1 -run XXX -bench 'EnabledDisabled|BaselineLoad|WriteDevNull' -benchmem ./userevents | grep ^Benchmark
