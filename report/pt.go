package report

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/iotap/iotap/intelpt"
)

// PT is the summary of one Intel PT trace: one entry per stream (a raw
// file is one stream; perf.data has one per CPU or thread).
type PT struct {
	Streams []PTStream
	// PerfLoss describes the loss perf recorded, "" when none.
	PerfLoss string
	// Loss describes all data lost (overflows, truncation, perf's loss
	// records), "" when none.
	Loss string
	// Calls is the time per function, when the call tree of the trace is
	// known (nil until a producer fills it: see PTFunction).
	Calls []PTFunction
}

// PTStream is the packet summary of one PT stream.
type PTStream struct {
	Name  string // the file for a raw trace, "cpu N" or "tid N" in perf.data
	CPU   int32  // -1 when not per CPU
	Stats intelpt.Stats
}

// PTFunction is the time spent in one function of a traced program: the
// extension point of the report for PT call trees (flame graph rows).
type PTFunction struct {
	Name string
	// Self and Total are times (ns or TSC ticks, see Unit) without and
	// with the callees.
	Self, Total int64
	Unit        string
}

// PTOptions tune AnalyzePT.
type PTOptions struct {
	// Config returns the timing configuration of a raw trace file (e.g.
	// from the capture.json beside it); nil or !ok means none.
	Config func(path string) (intelpt.Config, bool)
}

// AnalyzePT summarises the PT trace at path, raw (streamed in constant
// memory) or perf.data (read whole).
func AnalyzePT(ctx context.Context, path string, o PTOptions) (*PT, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	p := &PT{}
	var lost []string
	if magic, _ := br.Peek(len(intelpt.PerfMagic)); !intelpt.IsPerfData(magic) {
		var cfg intelpt.Config
		if o.Config != nil {
			cfg, _ = o.Config(path)
		}
		s, err := intelpt.ComputeStatsReader(ctxReader{ctx, br}, cfg)
		if err != nil {
			return nil, fmt.Errorf("pt stats: %s: %w", path, err)
		}
		p.Streams = []PTStream{{Name: path, CPU: -1, Stats: s}}
	} else {
		b, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		// a cut file gives what it holds; the cut is in PerfLoss
		tr, err := intelpt.PerfDataPTTruncated(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(tr.Streams) == 0 {
			return nil, fmt.Errorf("%s: perf.data holds no PT data (no PERF_RECORD_AUXTRACE: was it recorded with -e intel_pt//?)", path)
		}
		for i := range tr.Streams {
			s := &tr.Streams[i]
			p.Streams = append(p.Streams, PTStream{Name: s.Name(), CPU: s.CPU, Stats: intelpt.ComputeStats(s.Data, tr.Config)})
		}
		p.PerfLoss = tr.LossSummary()
	}
	for _, s := range p.Streams {
		if s.Stats.Overflows > 0 {
			lost = append(lost, fmt.Sprintf("%s: %d overflow(s)", s.Name, s.Stats.Overflows))
		}
		if s.Stats.Truncated {
			lost = append(lost, fmt.Sprintf("%s: truncated tail", s.Name))
		}
	}
	if p.PerfLoss != "" {
		lost = append(lost, p.PerfLoss)
	}
	if len(lost) > 0 {
		p.Loss = fmt.Sprintf("pt stats: data lost: %v", lost)
	}
	return p, nil
}

// WritePTText prints the summary of 'iotap pt stats' for one stream.
func WritePTText(out io.Writer, name string, s *intelpt.Stats) {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "trace\t%s\n", name)
	fmt.Fprintf(w, "bytes\t%d\n", s.Bytes)
	fmt.Fprintf(w, "packets\t%d\n", s.Packets)
	fmt.Fprintf(w, "psb\t%d", s.PSBs)
	if s.PSBs > 1 {
		fmt.Fprintf(w, " (spacing min %d, mean %d, max %d bytes)", s.PSBGapMin, s.PSBGapMean, s.PSBGapMax)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "overflows\t%d\n", s.Overflows)
	fmt.Fprintf(w, "errors\t%d", s.Errors)
	if len(s.ErrorOffsets) > 0 {
		fmt.Fprintf(w, " (first at %#x)", s.ErrorOffsets[0])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "skipped bytes\t%d\n", s.SkippedBytes)
	if s.Truncated {
		fmt.Fprintf(w, "truncated\tyes\n")
	}
	if s.HaveTime {
		fmt.Fprintf(w, "tsc\t%#x .. %#x (%d ticks)\n", s.FirstTSC, s.LastTSC, s.LastTSC-s.FirstTSC)
	} else {
		fmt.Fprintf(w, "tsc\tnone\n")
	}
	for _, k := range intelpt.Kinds() {
		if n := s.Count(k); n > 0 {
			fmt.Fprintf(w, "  %s\t%d\n", k, n)
		}
	}
	w.Flush()
}
