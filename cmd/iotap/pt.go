package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/intelpt"
)

// newPTCmd is the `iotap pt` command group (Intel Processor Trace).
func newPTCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "pt",
		Short: "Intel Processor Trace: dump and summarise PT packets, capture with perf (intel_pt)",
		Long: `Intel Processor Trace (PT) tools.

  iotap pt dump FILE      list packets like libipt's ptdump (same text for the same trace)
  iotap pt stats FILE     packets by kind, PSB spacing, overflows, time span
  iotap pt capture -o DIR record PT per CPU with perf_event_open (Intel CPUs only)

FILE is a raw PT stream (as written by 'iotap pt capture', perf's AUX area, or
libipt's pttc) or a perf.data file from 'perf record -e intel_pt//': the
format is detected from the content (perf.data starts with PERFILE2).
Decoding works on any machine; capture needs an Intel CPU with the intel_pt PMU.`,
	}
	c.AddCommand(newPTDumpCmd(e), newPTStatsCmd(e), newPTCaptureCmd(e), newPTFlowCmd(e), newPTCallsCmd(e))
	return c
}

// ptPSB is a PSB packet: a raw PT trace is decoded from its first one.
var ptPSB = bytes.Repeat([]byte{0x02, 0x82}, 8)

// ptInput is one PT stream to decode.
type ptInput struct {
	name string // "" for a raw file, "cpu N" or "tid N" for perf.data streams
	cpu  int32
	data []byte
}

// ptLoad reads FILE ("-" for stdin) and splits perf.data into its streams.
// It returns the streams, the configuration found in perf.data (if any) and
// perf's loss record.
func ptLoad(e *env, path string) ([]ptInput, *intelpt.PerfTrace, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return nil, nil, fmt.Errorf("pt: %s is a directory (give a trace file)", path)
		}
		b, err = os.ReadFile(path)
		if err != nil && os.IsNotExist(err) {
			// ptdump's FILE:FROM[-TO] selects a byte range.
			if name, from, to, ok := ptRange(path); ok {
				if b, err = os.ReadFile(name); err == nil {
					if from >= uint64(len(b)) || (to != 0 && to > uint64(len(b))) {
						return nil, nil, usageErrorf("pt: range %#x-%#x outside %s (%d bytes)", from, to, name, len(b))
					}
					if to == 0 {
						to = uint64(len(b))
					}
					b = b[from:to]
				}
			}
		}
	}
	if err != nil {
		return nil, nil, detect.ReadError(path, err)
	}
	if !intelpt.IsPerfData(b) {
		if !bytes.Contains(b, ptPSB) {
			// Not PT at all: say what it is (detect), or why not.
			if _, derr := detect.Expect(b[:min(len(b), detect.HeadSize)], len(b) <= detect.HeadSize, detect.PT); derr != nil {
				return nil, nil, fmt.Errorf("pt: %s: %w", path, derr)
			}
			return nil, nil, fmt.Errorf("pt: %s: not an Intel PT trace: no PSB packet in its %d bytes (decoding starts at a PSB)", path, len(b))
		}
		return []ptInput{{cpu: -1, data: b}}, nil, nil
	}
	// A cut perf.data (perf killed, disk full) gives what it holds; the cut
	// is loss in tr.LossSummary (exit 3 unless --allow-loss), as in timeline.
	tr, err := intelpt.PerfDataPTTruncated(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(tr.Streams) == 0 {
		return nil, tr, fmt.Errorf("%s: perf.data holds no PT data (no PERF_RECORD_AUXTRACE: was it recorded with -e intel_pt//?)", path)
	}
	var in []ptInput
	for i := range tr.Streams {
		s := &tr.Streams[i]
		in = append(in, ptInput{name: s.Name(), cpu: s.CPU, data: s.Data})
	}
	return in, tr, nil
}

// ptSidecarConfig returns the timing parameters recorded by 'iotap pt
// capture' in capture.json next to FILE, when FILE is one of its buffers.
func ptSidecarConfig(path string) (intelpt.Config, bool) {
	ci, _, ok := intelpt.CaptureInfoOf(path)
	if !ok {
		return intelpt.Config{}, false
	}
	return ci.DecoderConfig(), true
}

// ptRange splits "FILE:FROM[-TO]" (numbers in C syntax: 0x hex, 0 octal).
func ptRange(arg string) (name string, from, to uint64, ok bool) {
	i := strings.LastIndexByte(arg, ':')
	if i <= 0 {
		return "", 0, 0, false
	}
	a, b, isRange := strings.Cut(arg[i+1:], "-")
	from, err := strconv.ParseUint(a, 0, 64)
	if err != nil {
		return "", 0, 0, false
	}
	if isRange {
		if to, err = strconv.ParseUint(b, 0, 64); err != nil || to <= from {
			return "", 0, 0, false
		}
	}
	return arg[:i], from, to, true
}
