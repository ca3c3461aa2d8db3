// Command ptwrap wraps a raw PT trace of one thread and the raw code it
// ran (the ground-truth generator's PREFIX.pt and PREFIX.bin) into a
// perf.data file, as `perf record -e intel_pt//u --per-thread` would
// write it (intelpt/ptsynth: COMM, an MMAP2 of the code file at its
// address, ITRACE_START, the trace in one AUXTRACE record, AUX, EXIT; or
// with -chunk in records of at most N bytes, each followed by its AUX), so
// that commands reading perf.data (`iotap timeline --pt-calls`, `iotap
// pt calls`) run on generated traces of any length. With -capdir it
// writes the same run as an `iotap pt capture` directory instead
// (capture.json, thread.pt, thread.sideband, mapped_files.json; Linux
// only), the capture-directory input of bench/rss.sh.
//
//	go run ./bench/ptwrap -code run.bin -base 0x7f0060cb2000 -pt run.pt -o perf.data [-chunk 65536]
//	go run ./bench/ptwrap -code run.bin -base 0x7f0060cb2000 -pt run.pt -capdir DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/iotap/iotap/intelpt/ptsynth"
)

func main() {
	code := flag.String("code", "", "raw code file")
	baseS := flag.String("base", "", "its address (0x...)")
	pt := flag.String("pt", "", "raw PT trace of one thread")
	out := flag.String("o", "", "perf.data to write")
	capdir := flag.String("capdir", "", "write an 'iotap pt capture' `DIR` instead of a perf.data")
	chunk := flag.Int("chunk", 0, "write the trace in AUXTRACE records of at most `N` bytes, each followed by its AUX record, as perf record writes a long trace (0: one record)")
	flag.Parse()
	base, err := strconv.ParseUint(*baseS, 0, 64)
	if err != nil || *code == "" || *pt == "" || (*out == "") == (*capdir == "") {
		flag.Usage()
		os.Exit(2)
	}
	abs, _ := filepath.Abs(*code)
	st, err := os.Stat(abs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	trace, err := os.ReadFile(*pt)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	run := &ptsynth.Run{PID: 1000, Comm: "ptgen", Maps: []ptsynth.Map{{Start: base, End: base + uint64(st.Size()), Perm: "r-xp", Path: abs}}}
	// the sideband's times bracket any TSC the trace holds
	enc := &ptsynth.Encoded{PT: trace, TSC: []uint64{10, 1 << 56}}
	if *capdir != "" {
		if err := writeCaptureDir(*capdir, run, enc); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(*out, ptsynth.PerfData(run, enc, ptsynth.PerfOptions{PerThread: true, Chunk: *chunk}), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
