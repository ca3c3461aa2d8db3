#!/bin/sh
# User_events write cost: Go (Event.Write, Typed.Write, raw writev and
# pwrite loops from Go) against the C reference bench/userevents/writev.c
# (writev and pwrite, single-threaded and with a second idle thread), all
# writing the same enabled event in ONE lab guest run (QEMU, Linux 6.12, one
# vCPU), 15 alternated rounds of 50000 writes after 500 untimed ones; prints
# median [min-max] ns/op of wall clock and of the writing thread's CPU time,
# and the ratios. Then the host microbenchmarks (the host kernel has no
# user_events: /dev/null stands in for user_events_data).
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
