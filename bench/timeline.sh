#!/usr/bin/env bash
# bench/timeline.sh: peak memory (max RSS) of 'iotap timeline' exporting an
# mmiotrace log to Perfetto, at two log sizes, to show that memory does not
# grow with the input (target: < 100 MB at >= 1 GB).
#
#   bench/timeline.sh [SIZE_BYTES]      (default 1100000000)
#
# The log is testdata/mmiotrace/e1000-probe.log (a real e1000 probe captured
# in the lab) repeated, each copy's timestamps shifted after the previous
# one's, until SIZE_BYTES. It lives in a temporary directory removed at the
# end, also on error or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1100000000}
SRC=testdata/mmiotrace/e1000-probe.log

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iotap-timeline-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

go build -o "$tmp/iotap" ./cmd/iotap

# gen N OUT: the sample's header lines once, then copies of its timed
# records, each shifted after the previous copy, until N bytes.
cat > "$tmp/gen.go" <<'GO'
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	size, _ := strconv.ParseInt(os.Args[2], 10, 64)
	in, _ := os.ReadFile(os.Args[1])
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	var body [][]string
	var total int64
	for _, l := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		f := strings.Fields(l)
		switch f[0] {
		case "R", "W", "MAP", "UNMAP", "MARK", "UNKNOWN":
			body = append(body, f)
		default:
			n, _ := fmt.Fprintln(w, l)
			total += int64(n)
		}
	}
	k := func(f []string) int {
		if f[0] == "R" || f[0] == "W" {
			return 2
		}
		return 1
	}
	first, _ := strconv.ParseFloat(body[0][k(body[0])], 64)
	var shift, last float64
	for total < size {
		for _, f := range body {
			t, _ := strconv.ParseFloat(f[k(f)], 64)
			last = t + shift
			g := append([]string(nil), f...)
			g[k(f)] = strconv.FormatFloat(last, 'f', 6, 64)
			n, _ := fmt.Fprintln(w, strings.Join(g, " "))
			total += int64(n)
		}
		shift = last + 0.001 - first
	}
}
GO
gen() { go run "$tmp/gen.go" "$SRC" "$1" > "$2"; }

measure() {
  local log=$1 bytes
  bytes=$(stat -c %s "$log")
  # the trace goes to a pipe (its size counted), not to the disk
  /usr/bin/time -f '%M %e' -o "$tmp/time" "$tmp/iotap" timeline "$log" -o - --json 2> "$tmp/stats.json" | wc -c > "$tmp/out.size"
  read -r rss secs < "$tmp/time"
  out=$(cat "$tmp/out.size")
  events=$(grep -o '"events":[0-9]*' "$tmp/stats.json" | head -1 | cut -d: -f2)
  printf "log %6.0f MB, %9s events -> %6.0f MB Perfetto: max RSS %5.1f MB, %6.1f s\n" \
    "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$events" "$(awk -v b="$out" 'BEGIN{print b/1e6}')" \
    "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "$secs"
}

echo "cores: $(nproc)"
gen $((SIZE / 10)) "$tmp/small.log"
measure "$tmp/small.log"
rm -f "$tmp/small.log"
gen "$SIZE" "$tmp/big.log"
measure "$tmp/big.log"
