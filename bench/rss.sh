#!/usr/bin/env bash
# bench/rss.sh: peak resident set size of every command that streams an
# input (reads it and writes per-record output or a summary), each on a
# small input and on one 4 times larger, in one run (issue 15, "memory flat
# in input size"; the table in docs/performance.md).
#
#   bench/rss.sh [GROUP ...]    groups: usb mmio keys events pt flow
#                               capdir stdin parquet (default: all)
#
# Peak RSS is /usr/bin/time's "Maximum resident set size" (%M, KiB; the
# same figure as `/usr/bin/time -v`), one run per command and input: it
# does not depend on the load. Output goes to /dev/null or to files in the
# work directory. "x4.0" in the last column is the ratio large/small.
#
# Environment:
#   SCALE=1        multiplies every input size (SCALE=2: twice as large)
#   WORK=DIR       keep the inputs in DIR (default: a temporary directory,
#                  removed at the end; about 700 MB at SCALE=1)
#   KM003C=FILE    km003c-adc-1000hz.pcapng (default: the shared test data
#                  next to the repository, ../shared/testdata/usb; without
#                  it testdata/usbmon/lab-capture.pcapng is repeated)
#
# Inputs (made from the repository's generators and testdata):
#   usb     the pcapng repeated, each copy shifted after the previous
#           (bench/bigcap -pcapng): 8 and 32 MB
#   mmio    testdata/mmiotrace/e1000-probe.log's timed records repeated,
#           each copy after the previous (bench/bigcap -mmio): 32 and
#           128 MB; the same registers, PCs and values, 4 times as many
#           records; and for mmio diff a copy of each with edits spread
#           through it (gawk: records dropped, values changed, writes
#           inserted)
#   keys    mmiogen's synthetic log (mmiotrace/internal/mmiogen): 32 and
#           128 MB, random values and 64 Ki PCs, so its distinct keys grow
#           with its size too
#   events  `perf record -e syscalls:sys_enter_write -- dd bs=1 count=N`
#           (100,000 and 400,000 samples; needs perf and root: skipped
#           otherwise), and its `events read --json` NDJSON
#   pt      a raw trace from iotap's encoder (intelpt TestWriteBenchTrace):
#           16 and 64 MiB
#   flow    the ground-truth generator (intelpt/internal/ptgen): 10 M and
#           40 M executed instructions, raw trace + code, and the same
#           wrapped in a perf.data (bench/ptwrap, AUXTRACE records of
#           64 KiB); its default code and 4 KiB of code with the call depth
#           bounded (-max-depth 16) for the rows that rebuild calls
#   capdir  the bounded-depth run of the flow group as an 'iotap pt
#           capture' directory (bench/ptwrap -capdir)
#   parquet export --parquet on four sizes (a row per command, RSS
#           small -> ... -> large): the usb group's pcapng at 8, 32, 128
#           and 256 MB, and user_events NDJSON of the first 100 k, 400 k
#           and 800 k events and all of one perf record of 1.6 M writes
#           (about 1.5 M events, 313 MB; needs perf and root: skipped
#           otherwise); about 1 GB of inputs
#   stdin   the bounded-depth perf.data and trace of the flow group on
#           standard input (a pipe from cat, or a file), and the
#           perf.data compressed (gzip -1) for cut
set -uo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-1}
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(usb mmio keys events pt flow capdir stdin parquet)
if [ -n "${WORK:-}" ]; then
	work=$WORK
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/iotap-rss.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
fi
set -e
go build -o "$work/iotap" ./cmd/iotap
go build -o "$work/bigcap" ./bench/bigcap
iotap=$work/iotap
out=$work/out
set +e
sz() { awk -v s="$SCALE" -v b="$1" 'BEGIN { printf "%d", s * b }'; }
mb() {
	local b
	if [ -d "$1" ]; then b=$(du -sbL "$1" | cut -f1); else b=$(stat -L -c %s "$1"); fi
	awk -v b="$b" 'BEGIN { printf "%.1f MB", b / 1e6 }'
}

echo "# $(date -u '+%Y-%m-%d %H:%M') UTC; $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); SCALE=$SCALE"
echo "| command | input | small | large | RSS small | RSS large | large/small |"
echo "|---|---|---|---|---|---|---|"

# rss ARGS...: runs iotap ARGS once, prints its peak RSS in KiB ("exit N"
# after it when the exit status is neither 0 nor 3, loss). Its standard
# input is the file $stdin_file, or a pipe from cat $stdin_pipe, or
# /dev/null.
stdin_file= stdin_pipe=
rss() {
	rm -rf "$out" "$out".*
	local rc
	if [ -n "$stdin_pipe" ]; then
		cat "$stdin_pipe" | /usr/bin/time -f %M -o "$work/time" "$iotap" "$@" >/dev/null 2>"$work/stderr"
		rc=${PIPESTATUS[1]}
	else
		/usr/bin/time -f %M -o "$work/time" "$iotap" "$@" <"${stdin_file:-/dev/null}" >/dev/null 2>"$work/stderr"
		rc=$?
	fi
	rm -f "$work"/*.iotapidx
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
		echo "$(tail -n 1 "$work/time") exit $rc: $(head -c 200 "$work/stderr" | tr "\n" " ")"
	else
		tail -n 1 "$work/time"
	fi
}

# row INPUTNAME SMALL LARGE ARGS...: one table row; @IN@ in ARGS stands for
# the input, @OUT@ for an output file in the work directory, @EDIT@ for the
# input's edited copy (IN without .log, then -edit.log; the mmio group's);
# an argument @<IN@ gives the input as standard input (a file), @|IN@ as
# a pipe (cat IN |).
row() {
	local name=$1 small=$2 large=$3
	shift 3
	local a=() b=() x y redir=
	for x in "$@"; do
		case $x in
		@\<IN@ | @\|IN@)
			redir=${x:1:1}
			continue
			;;
		esac
		x=${x//@OUT@/$out}
		y=${x//@EDIT@/${small%.log}-edit.log}
		a+=("${y//@IN@/$small}")
		y=${x//@EDIT@/${large%.log}-edit.log}
		b+=("${y//@IN@/$large}")
	done
	local ra rb
	case $redir in
	"<") stdin_file=$small ra=$(rss "${a[@]}") stdin_file=$large rb=$(rss "${b[@]}") ;;
	"|") stdin_pipe=$small ra=$(rss "${a[@]}") stdin_pipe=$large rb=$(rss "${b[@]}") ;;
	*) ra=$(rss "${a[@]}") rb=$(rss "${b[@]}") ;;
	esac
	stdin_file= stdin_pipe=
	local label="iotap $*"
	case $redir in
	"<") label="${label/ @<IN@/} < IN" ;;
	"|") label="cat IN | ${label/ @|IN@/}" ;;
	esac
	label=${label//@IN@/IN}
	label=${label//@OUT@/OUT}
	label=${label//@EDIT@/EDIT}
	label=${label//$work\//WORK/}
	awk -v l="$label" -v n="$name" -v s="$(mb "$small")" -v t="$(mb "$large")" -v a="$ra" -v b="$rb" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "| `%s` | %s | %s | %s | %.1f MiB%s | %.1f MiB%s | x%.2f |\n", l, n, s, t,
			x[1] / 1024, (a ~ /exit/ ? " (" substr(a, index(a, "exit")) ")" : ""),
			y[1] / 1024, (b ~ /exit/ ? " (" substr(b, index(b, "exit")) ")" : ""),
			y[1] / x[1]
	}'
}

# series INPUTNAME IN1 IN2 ... -- ARGS...: one row, the command run on each
# input in turn (@IN@, @OUT@ as for row), its peak RSS on each.
series() {
	local name=$1 ins=() x
	shift
	while [ "$1" != -- ]; do
		ins+=("$1")
		shift
	done
	shift
	local sizes=() rsss=() a
	for x in "${ins[@]}"; do
		a=("${@//@OUT@/$out}")
		a=("${a[@]//@IN@/$x}")
		sizes+=("$(mb "$x" | cut -d' ' -f1)")
		rsss+=("$(rss "${a[@]}" | awk '{ printf "%.1f", $1 / 1024; if (NF > 1) printf " (%s)", substr($0, index($0, "exit")) }')")
	done
	local label="iotap $*"
	label=${label//@IN@/IN}
	label=${label//@OUT@/OUT}
	local IFS=,
	awk -v l="$label" -v n="$name" -v s="${sizes[*]}" -v r="${rsss[*]}" 'BEGIN {
		gsub(",", " -> ", s); gsub(",", " -> ", r)
		printf "| `%s` | %s | %s MB | | %s MiB | | |\n", l, n, s, r
	}'
}

# ptgen_inputs makes the ptgen inputs of the flow, capdir and stdin
# groups (once): flow-*: ptgen's default random code (256 KiB), whose
# call depth drifts deeper with the run (8,847 -> 35,891 calls); call-*:
# 4 KiB of code whose depth stays bounded (-max-depth 16: 10 calls deep
# at most, as a real program's stack), the input of the rows that rebuild
# calls. Both wrapped in a perf.data as perf record writes a long trace:
# AUXTRACE records of 64 KiB (-chunk), each followed by its AUX record;
# call-*.cap: the same run as an 'iotap pt capture' directory (ptwrap
# -capdir: capture.json, thread.pt, thread.sideband, mapped_files.json).
ptgen_inputs() {
	[ -x "$work/ptgen" ] || go build -o "$work/ptgen" ./intelpt/internal/ptgen/cmd/ptgen
	[ -x "$work/ptwrap" ] || go build -o "$work/ptwrap" ./bench/ptwrap
	local f i k opt base
	for f in s l; do
		i=$(sz 10000000)
		[ $f = l ] && i=$(sz 40000000)
		for k in flow call; do
			[ -s "$work/$k-$f.data" ] && continue
			opt=()
			[ $k = call ] && opt=(-code 4096 -max-depth 16)
			"$work/ptgen" -seed 1 -insns "$i" -timing "${opt[@]}" -o "$work/$k-$f" >"$work/$k-$f.gen"
			base=$(awk '/^base/ { print $2 }' "$work/$k-$f.gen")
			"$work/ptwrap" -chunk 65536 -code "$work/$k-$f.bin" -base "$base" -pt "$work/$k-$f.pt" -o "$work/$k-$f.data"
		done
		if [ ! -s "$work/call-$f.cap/thread.pt" ]; then
			base=$(awk '/^base/ { print $2 }' "$work/call-$f.gen")
			"$work/ptwrap" -code "$work/call-$f.bin" -base "$base" -pt "$work/call-$f.pt" -capdir "$work/call-$f.cap"
		fi
	done
}

for g in "${groups[@]}"; do
	case $g in
	usb)
		km=${KM003C:-../shared/testdata/usb/km003c-adc-1000hz.pcapng}
		[ -r "$km" ] || km=testdata/usbmon/lab-capture.pcapng
		s=$work/usb-s.pcapng l=$work/usb-l.pcapng
		[ -s "$s" ] || "$work/bigcap" -pcapng "$km" -size "$(sz 8000000)" -o "$s" >/dev/null
		[ -s "$l" ] || "$work/bigcap" -pcapng "$km" -size "$(sz 32000000)" -o "$l" >/dev/null
		n=pcapng
		row $n "$s" "$l" usb read @IN@
		row $n "$s" "$l" usb read --json @IN@
		row $n "$s" "$l" usb pair @IN@
		row $n "$s" "$l" usb stats @IN@
		row $n "$s" "$l" usb stats --json @IN@
		row $n "$s" "$l" usb convert --format pcap @IN@ -o @OUT@
		row $n "$s" "$l" usb convert --format 1u @IN@ -o @OUT@
		row $n "$s" "$l" cut --no-index --allow-loss --from 0 --to 1000000 @IN@ -o @OUT@
		row $n "$s" "$l" index @IN@
		row $n "$s" "$l" timeline --allow-loss @IN@ -o @OUT@.pftrace
		row $n "$s" "$l" report --allow-loss @IN@
		row $n "$s" "$l" report --allow-loss @IN@ -o @OUT@.html
		row $n "$s" "$l" export --allow-loss --parquet @OUT@ @IN@
		;;
	mmio)
		s=$work/mmio-s.log l=$work/mmio-l.log
		[ -s "$s" ] || "$work/bigcap" -mmio testdata/mmiotrace/e1000-probe.log -size "$(sz 32000000)" -o "$s" >/dev/null
		[ -s "$l" ] || "$work/bigcap" -mmio testdata/mmiotrace/e1000-probe.log -size "$(sz 128000000)" -o "$l" >/dev/null
		n="mmiotrace (same keys)"
		row "$n" "$s" "$l" mmio read @IN@
		row "$n" "$s" "$l" mmio read --json @IN@
		row "$n" "$s" "$l" mmio read --check @IN@
		row "$n" "$s" "$l" mmio filter --kind W @IN@ -o @OUT@
		row "$n" "$s" "$l" mmio stats @IN@
		row "$n" "$s" "$l" mmio stats --json @IN@
		row "$n" "$s" "$l" mmio names @IN@
		row "$n" "$s" "$l" mmio replay --dry-run @IN@
		row "$n" "$s" "$l" mmio diff --allow-loss @IN@ @IN@
		# A copy with edits spread through it: every 100,003rd R/W record
		# dropped, every 77,773rd given another value, after every
		# 150,001st a write to another register (0xfebc1ff0) inserted.
		for x in "$s" "$l"; do
			[ -s "${x%.log}-edit.log" ] || gawk '/^[RW] / { n++; if (n % 100003 == 0) next; if (n % 77773 == 0) $6 = "0x5a5a5a5a"; if (n % 150001 == 0) { print; $5 = "0xfebc1ff0" } } { print }' "$x" >"${x%.log}-edit.log"
		done
		row "$n, edited copy" "$s" "$l" mmio diff --allow-loss @IN@ @EDIT@
		row "$n" "$s" "$l" cut --no-index --allow-loss --from 0 --to 1000000 @IN@ -o @OUT@
		row "$n" "$s" "$l" index @IN@
		row "$n" "$s" "$l" timeline --allow-loss @IN@ -o @OUT@.pftrace
		row "$n" "$s" "$l" report --allow-loss @IN@
		row "$n" "$s" "$l" report --allow-loss @IN@ -o @OUT@.html
		row "$n" "$s" "$l" export --allow-loss --parquet @OUT@ @IN@
		;;
	keys)
		go build -o "$work/mmiogen" ./mmiotrace/internal/mmiogen
		s=$work/keys-s.log l=$work/keys-l.log
		[ -s "$s" ] || "$work/mmiogen" -size "$(sz 32000000)" -o "$s" >/dev/null
		[ -s "$l" ] || "$work/mmiogen" -size "$(sz 128000000)" -o "$l" >/dev/null
		n="mmiotrace (mmiogen)"
		row "$n" "$s" "$l" mmio stats @IN@
		row "$n" "$s" "$l" mmio names @IN@
		row "$n" "$s" "$l" timeline --allow-loss @IN@ -o @OUT@.pftrace
		row "$n" "$s" "$l" report --allow-loss @IN@
		row "$n" "$s" "$l" report --allow-loss @IN@ -o @OUT@.html
		row "$n" "$s" "$l" export --allow-loss --parquet @OUT@ @IN@
		;;
	events)
		if ! command -v perf >/dev/null || [ "$(id -u)" != 0 ]; then
			echo "events: skipped (needs perf and root)" >&2
			continue
		fi
		s=$work/events-s.data l=$work/events-l.data
		for f in s l; do
			p=$work/events-$f.data c=$(sz 100000)
			[ $f = l ] && c=$(sz 400000)
			[ -s "$p" ] || perf record -q -o "$p" -e syscalls:sys_enter_write -- dd if=/dev/zero of=/dev/null bs=1 count="$c" 2>/dev/null
			[ -s "$work/events-$f.ndjson" ] || "$iotap" events read --json "$p" >"$work/events-$f.ndjson" 2>/dev/null
		done
		row perf.data "$s" "$l" events read @IN@
		row perf.data "$s" "$l" events read --json @IN@
		s=$work/events-s.ndjson l=$work/events-l.ndjson
		n="user_events NDJSON"
		row "$n" "$s" "$l" cut --no-index --allow-loss --from 0 --to 1000000 @IN@ -o @OUT@
		row "$n" "$s" "$l" timeline --allow-loss @IN@ -o @OUT@.pftrace
		row "$n" "$s" "$l" report --allow-loss @IN@
		row "$n" "$s" "$l" export --allow-loss --parquet @OUT@ @IN@
		;;
	pt)
		s=$work/pt-s.pt l=$work/pt-l.pt
		[ -s "$s" ] || IOTAP_PT_BENCH_OUT="$s" IOTAP_PT_BENCH_MB=$(sz 16) go test -count=1 -run '^TestWriteBenchTrace$' ./intelpt >/dev/null
		[ -s "$l" ] || IOTAP_PT_BENCH_OUT="$l" IOTAP_PT_BENCH_MB=$(sz 64) go test -count=1 -run '^TestWriteBenchTrace$' ./intelpt >/dev/null
		n="raw PT"
		row "$n" "$s" "$l" pt dump --allow-loss @IN@
		row "$n" "$s" "$l" pt dump --json --allow-loss @IN@
		row "$n" "$s" "$l" pt stats --allow-loss @IN@
		row "$n" "$s" "$l" pt stats --json --allow-loss @IN@
		row "$n" "$s" "$l" report --allow-loss @IN@
		row "$n" "$s" "$l" export --allow-loss --parquet @OUT@ @IN@
		;;
	flow)
		ptgen_inputs
		# ptgen's code depends on the seed and its size only: one --raw for both.
		base=$(awk '/^base/ { print $2 }' "$work/flow-s.gen")
		cbase=$(awk '/^base/ { print $2 }' "$work/call-s.gen")
		n="ptgen trace"
		row "$n" "$work/flow-s.pt" "$work/flow-l.pt" pt flow --allow-loss --raw "$work/flow-s.bin:$base" @IN@
		row "$n" "$work/flow-s.pt" "$work/flow-l.pt" pt flow --allow-loss --quiet --stat --raw "$work/flow-s.bin:$base" @IN@
		row "$n" "$work/flow-s.pt" "$work/flow-l.pt" pt calls --allow-loss --raw "$work/flow-s.bin:$base" @IN@
		n="ptgen trace, bounded depth"
		row "$n" "$work/call-s.pt" "$work/call-l.pt" pt calls --allow-loss --raw "$work/call-s.bin:$cbase" @IN@
		row "$n" "$work/call-s.pt" "$work/call-l.pt" pt calls --json --allow-loss --raw "$work/call-s.bin:$cbase" @IN@
		row "$n" "$work/call-s.pt" "$work/call-l.pt" pt calls --folded --allow-loss --raw "$work/call-s.bin:$cbase" @IN@
		n="ptgen perf.data"
		row "$n" "$work/flow-s.data" "$work/flow-l.data" pt dump --allow-loss @IN@
		row "$n" "$work/flow-s.data" "$work/flow-l.data" pt stats --allow-loss @IN@
		row "$n" "$work/flow-s.data" "$work/flow-l.data" pt flow --allow-loss --quiet --stat @IN@
		row "$n" "$work/flow-s.data" "$work/flow-l.data" pt calls --allow-loss @IN@
		row "$n" "$work/flow-s.data" "$work/flow-l.data" cut --no-index --allow-loss --from 0 --to 1000000 @IN@ -o @OUT@
		n="ptgen perf.data, bounded depth"
		row "$n" "$work/call-s.data" "$work/call-l.data" pt dump --allow-loss @IN@
		row "$n" "$work/call-s.data" "$work/call-l.data" pt stats --allow-loss @IN@
		row "$n" "$work/call-s.data" "$work/call-l.data" pt flow --allow-loss --quiet --stat @IN@
		row "$n" "$work/call-s.data" "$work/call-l.data" pt calls --allow-loss @IN@
		row "$n" "$work/call-s.data" "$work/call-l.data" pt calls --json --allow-loss @IN@
		row "$n" "$work/call-s.data" "$work/call-l.data" timeline --allow-loss --pt-calls @IN@ -o @OUT@.pftrace
		row "$n" "$work/call-s.data" "$work/call-l.data" cut --no-index --allow-loss --from 0 --to 1000000 @IN@ -o @OUT@
		row "$n" "$work/call-s.data" "$work/call-l.data" report --allow-loss @IN@
		row "$n" "$work/call-s.data" "$work/call-l.data" export --allow-loss --parquet @OUT@ @IN@
		;;
	capdir)
		# the bounded-depth run as 'iotap pt capture' writes it: one
		# thread's trace file (thread.pt), its raw sideband, capture.json
		ptgen_inputs
		n="ptgen pt capture directory, bounded depth"
		s=$work/call-s.cap l=$work/call-l.cap
		row "$n" "$s" "$l" pt dump --allow-loss @IN@/thread.pt
		row "$n" "$s" "$l" pt stats --allow-loss @IN@/thread.pt
		row "$n" "$s" "$l" pt flow --allow-loss --quiet --stat @IN@
		row "$n" "$s" "$l" pt calls --allow-loss @IN@
		row "$n" "$s" "$l" pt calls --json --allow-loss @IN@
		row "$n" "$s" "$l" timeline --allow-loss --pt-calls @IN@ -o @OUT@.pftrace
		row "$n" "$s" "$l" cut --no-index --allow-loss --from 0 --to 1000000 @IN@/thread.pt -o @OUT@
		row "$n" "$s" "$l" report --allow-loss @IN@
		row "$n" "$s" "$l" export --allow-loss --parquet @OUT@ @IN@
		;;
	stdin)
		# inputs that cannot be read twice or mapped: a perf.data or raw
		# trace on standard input (a file, or a pipe from cat), a
		# compressed perf.data given to cut
		ptgen_inputs
		for f in s l; do
			[ -s "$work/call-$f.data.gz" ] || gzip -1 -c "$work/call-$f.data" >"$work/call-$f.data.gz"
		done
		cbase=$(awk '/^base/ { print $2 }' "$work/call-s.gen")
		n="ptgen perf.data, bounded depth"
		s=$work/call-s.data l=$work/call-l.data
		row "$n" "$s" "$l" pt dump --allow-loss - @\|IN@
		row "$n" "$s" "$l" pt stats --allow-loss - @\|IN@
		row "$n" "$s" "$l" timeline --allow-loss - -o @OUT@.pftrace @\|IN@
		row "$n" "$s" "$l" timeline --allow-loss --pt-calls - -o @OUT@.pftrace @\|IN@
		row "$n" "$s" "$l" timeline --allow-loss --pt-calls - -o @OUT@.pftrace @\<IN@
		row "$n" "$s" "$l" report --allow-loss - @\|IN@
		n="ptgen perf.data, bounded depth, gzip -1"
		row "$n" "$s.gz" "$l.gz" cut --no-index --allow-loss --from 0 --to 1000000 @IN@ -o @OUT@
		n="ptgen trace, bounded depth"
		s=$work/call-s.pt l=$work/call-l.pt
		row "$n" "$s" "$l" pt dump --allow-loss - @\|IN@
		row "$n" "$s" "$l" pt stats --allow-loss - @\|IN@
		row "$n" "$s" "$l" pt flow --allow-loss --quiet --stat --raw "$work/call-s.bin:$cbase" - @\|IN@
		row "$n" "$s" "$l" pt flow --allow-loss --quiet --stat --raw "$work/call-s.bin:$cbase" - @\<IN@
		;;
	parquet)
		km=${KM003C:-../shared/testdata/usb/km003c-adc-1000hz.pcapng}
		[ -r "$km" ] || km=testdata/usbmon/lab-capture.pcapng
		ins=()
		for m in 8 32 128 256; do
			f=$work/parquet-usb-$m.pcapng
			[ -s "$f" ] || "$work/bigcap" -pcapng "$km" -size "$(sz "${m}000000")" -o "$f" >/dev/null
			ins+=("$f")
		done
		series pcapng "${ins[@]}" -- export --allow-loss --parquet @OUT@ @IN@
		series pcapng "${ins[@]}" -- export --allow-loss --row-group-rows 65536 --parquet @OUT@ @IN@
		if ! command -v perf >/dev/null || [ "$(id -u)" != 0 ]; then
			echo "parquet: user_events rows skipped (needs perf and root)" >&2
			continue
		fi
		all=$work/parquet-events-all.ndjson
		if [ ! -s "$all" ]; then
			p=$work/parquet-events.data
			perf record -q -o "$p" -e syscalls:sys_enter_write -- dd if=/dev/zero of=/dev/null bs=1 count="$(sz 1600000)" 2>/dev/null
			"$iotap" events read --json "$p" >"$all" 2>/dev/null
			rm -f "$p"
		fi
		ins=()
		for k in 100 400 800; do
			f=$work/parquet-events-${k}k.ndjson
			[ -s "$f" ] || head -n "$(sz "$((k * 1000 + 1))")" "$all" >"$f"
			ins+=("$f")
		done
		series "user_events NDJSON" "${ins[@]}" "$all" -- export --allow-loss --parquet @OUT@ @IN@
		;;
	*)
		echo "unknown group $g (usb mmio keys events pt flow capdir stdin parquet)" >&2
		exit 2
		;;
	esac
done
