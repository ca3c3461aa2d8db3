#!/usr/bin/env bash
# bench/whole.sh: whole-process time of what users run, against the
# reference tool on the same input, in one run (issue 15; the table in
# docs/performance.md). Each pair runs alternately (A B A B ...) after one
# warm-up run each; the medians of user+system CPU seconds, wall seconds and
# peak RSS (bench/cputime.py: wait4) are printed, with the ratios reference/iotap.
#
#   bench/whole.sh [ROW ...]    rows: usb pt mmio (default: all)
#
# Environment:
#   N=5                 counted runs per command
#   WORK=DIR            keep inputs in DIR (default: a temporary directory,
#                       removed at the end); check `df -h` first: about
#                       400 MB
#   KM003C=FILE         km003c-adc-1000hz.pcapng (default: the shared test
#                       data next to the repository, ../shared/testdata/usb)
#   PTDUMP=FILE         libipt's ptdump (not packaged by Debian: build it from
#                       github.com/intel/libipt outside this repository, e.g.
#                       without cmake, in a checkout of tag v2.2, after
#                       writing intel-pt.h from libipt/include/intel-pt.h.in
#                       and a pt_version.h defining pt_print_tool_version:
#                       gcc -O2 -DFEATURE_THREADS -DPT_VERSION_MAJOR=2
#                       -DPT_VERSION_MINOR=2 -DPT_VERSION_PATCH=0
#                       -DPT_VERSION_BUILD=0 -DPT_VERSION_EXT='""' -I.
#                       -Ilibipt/internal/include
#                       -Ilibipt/internal/include/posix -Iinclude
#                       -o ptdump ptdump/src/ptdump.c libipt/src/*.c
#                       libipt/src/posix/*.c -lpthread);
#                       the pt dump row is skipped without it
#
# Inputs:
#   usb:  40 copies of km003c-adc-1000hz.pcapng, each shifted by 20 s
#         (editcap -t), merged (mergecap): 138,320 events, 21.9 MB
#   pt:   a 64 MiB trace from iotap's encoder (TestWriteBenchTrace: TNT,
#         compressed TIPs, CYC/MTC, PSB+ every 4 KiB)
#   mmio: a 267 MB e1000-shaped log (mmiotrace/internal/mmiogen)
# References:
#   usb read/stats   tshark -r FILE -T fields -e (12 usbmon fields), and
#                    for usb stats also tshark -q -z conv,usb
#   pt stats         libipt's pt_pkt_next loop (bench/ptpkt, gcc -O2,
#                    reads the file and decodes it once)
#   pt dump          libipt's ptdump (outputs compared byte for byte)
#   mmio read --json gawk with the awk filter of the mmiotrace
#                    documentation (32-bit writes to one address range)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-5}
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=(usb pt mmio)
if [ -n "${WORK:-}" ]; then
	work=$WORK
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/iotap-whole.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
fi
# iotap as README installs it: static (CGO_ENABLED=0; nothing in iotap
# uses cgo, and the cgo-linked default build starts slower:
# docs/performance.md). CGO_ENABLED=1 measures the default build.
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/iotap" ./cmd/iotap
iotap=$work/iotap

echo "# $(date -u '+%Y-%m-%d %H:%M') UTC; $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); N=$N"

# measure NAME CMD: one run of the command line CMD (split as a shell
# would, run without a shell: bench/cputime.py), appends "cpu wall rssKiB"
# to $work/NAME.t; CPU seconds from wait4 (microseconds: /usr/bin/time
# prints hundredths, too coarse for a 40 ms process). Its output goes to
# /dev/null.
measure() {
	python3 -S bench/cputime.py "$work/$1.t" "$2"
}

median() { # column of $work/NAME.t
	awk -v c="$2" '{ print $c }' "$work/$1.t" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# pair LABEL "IOTAP CMD" "REFERENCE CMD": N alternating runs, one line.
pair() {
	local label=$1 a=$2 b=$3
	rm -f "$work/a.t" "$work/b.t"
	bash -c "$a" >/dev/null 2>&1 || true # warm-up
	bash -c "$b" >/dev/null 2>&1 || true
	: >"$work/a.t"
	: >"$work/b.t"
	for _ in $(seq "$N"); do
		measure a "$a"
		measure b "$b"
	done
	local ac aw am bc bw bm
	ac=$(median a 1) aw=$(median a 2) am=$(median a 3)
	bc=$(median b 1) bw=$(median b 2) bm=$(median b 3)
	awk -v l="$label" -v ac="$ac" -v aw="$aw" -v am="$am" -v bc="$bc" -v bw="$bw" -v bm="$bm" 'BEGIN {
		if (ac < 0.0005) ac = 0.0005
		if (aw < 0.0005) aw = 0.0005
		printf "%-34s iotap %8.4f s CPU %7.3f s wall %6.1f MiB | ref %7.3f s CPU %7.3f s wall %6.1f MiB | ratio %5.1fx CPU %5.1fx wall\n",
			l, ac, aw, am / 1024, bc, bw, bm / 1024, bc / ac, bw / aw
	}'
}

fields="-e frame.number -e frame.time_epoch -e usb.urb_id -e usb.urb_type -e usb.transfer_type -e usb.endpoint_address -e usb.device_address -e usb.bus_id -e usb.urb_status -e usb.urb_len -e usb.data_len -e usb.capdata"

for row in "${rows[@]}"; do
	case $row in
	usb)
		km=${KM003C:-../shared/testdata/usb/km003c-adc-1000hz.pcapng}
		[ -r "$km" ] || { echo "usb: $km missing (KM003C=FILE)" >&2; continue; }
		big=$work/km40.pcapng
		if [ ! -s "$big" ]; then
			mkdir -p "$work/parts"
			for i in $(seq 0 39); do editcap -t $((i * 20)) "$km" "$work/parts/p$i.pcapng"; done
			mergecap -w "$big" "$work/parts"/p*.pcapng
			rm -rf "$work/parts"
		fi
		n=$("$iotap" usb read "$big" | wc -l)
		t=$(tshark -r "$big" -T fields -e frame.number 2>/dev/null | wc -l)
		echo "usb input: $(stat -L -c %s "$big") bytes, $n events (tshark: $t)"
		pair "usb read" "$iotap usb read $big" "tshark -r $big -T fields $fields"
		pair "usb read (tshark text)" "$iotap usb read $big" "tshark -r $big"
		pair "usb stats" "$iotap usb stats $big" "tshark -r $big -T fields $fields"
		pair "usb stats (tshark conv,usb)" "$iotap usb stats $big" "tshark -r $big -q -z conv,usb"
		pair "usb read --json" "$iotap usb read --json $big" "tshark -r $big -T fields $fields"
		;;
	pt)
		trace=$work/trace64.pt
		[ -s "$trace" ] || IOTAP_PT_BENCH_OUT="$trace" IOTAP_PT_BENCH_MB=64 go test -count=1 -run '^TestWriteBenchTrace$' ./intelpt >/dev/null
		gcc -O2 -o "$work/ptpkt" bench/ptpkt/ptpkt.c -lipt
		echo "pt input: $(stat -L -c %s "$trace") bytes"
		pair "pt stats" "$iotap pt stats $trace" "$work/ptpkt bench $trace 1"
		pair "pt stats --workers 2" "$iotap pt stats --workers 2 $trace" "$work/ptpkt bench $trace 1"
		if [ -n "${PTDUMP:-}" ]; then
			"$PTDUMP" "$trace" | cmp - <("$iotap" pt dump "$trace") && echo "pt dump: outputs identical"
			pair "pt dump" "$iotap pt dump $trace" "$PTDUMP $trace"
			"$iotap" pt dump --workers 2 "$trace" | cmp - <("$iotap" pt dump "$trace") && echo "pt dump --workers 2: output identical"
			pair "pt dump --workers 2" "$iotap pt dump --workers 2 $trace" "$PTDUMP $trace"
		else
			echo "pt dump: skipped (PTDUMP not set)"
		fi
		;;
	mmio)
		log=$work/big267.log
		if [ ! -s "$log" ]; then
			go build -o "$work/mmiogen" ./mmiotrace/internal/mmiogen
			"$work/mmiogen" -size 267000000 -o "$log" >/dev/null
		fi
		echo "mmio input: $(stat -L -c %s "$log") bytes, $(wc -l <"$log") lines"
		pair "mmio read --json" "$iotap mmio read --json $log" \
			"gawk '/W 4 / { adr=strtonum(\$5); if (adr >= 0xfebc0000 && adr < 0xfebc0100) print; }' $log"
		# The default uses every core for a plain log of 4 MiB or more;
		# one goroutine shows the CPU cost of the transform alone.
		pair "mmio read --json --workers 1" "$iotap mmio read --json --workers 1 $log" \
			"gawk '/W 4 / { adr=strtonum(\$5); if (adr >= 0xfebc0000 && adr < 0xfebc0100) print; }' $log"
		;;
	*)
		echo "unknown row $row (usb, pt, mmio)" >&2
		exit 2
		;;
	esac
done
