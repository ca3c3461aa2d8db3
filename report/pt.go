package report

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
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
	// Calls is the time per function (most self instructions first), from
	// the call tree of the trace (CallTree).
	Calls []PTFunction
	// CallTree is the call tree that `iotap pt calls` prints for a
	// perf.data file (the threads are the root's children; nil when the
	// calls were not analysed: a raw trace has no sideband to find its
	// code). CallNotes says what the analysis could not decode (mappings
	// not found, gaps; empty when nothing) and CallErr why it failed.
	CallTree  *calls.Node
	CallStats calls.Stats
	CallNotes []string
	CallErr   error
}

// PTStream is the packet summary of one PT stream.
type PTStream struct {
	Name  string // the file for a raw trace, "cpu N" or "tid N" in perf.data
	CPU   int32  // -1 when not per CPU
	Stats intelpt.Stats
}

// PTFunction is the time spent in one function of a traced program,
// summed over the paths of the call tree it appears on.
type PTFunction struct {
	Name string
	// Calls is the number of calls (the count of `pt calls --json`
	// objects of this function).
	Calls int
	// Self and Total are times (ns or TSC ticks, see Unit) without and
	// with the callees (a recursive call's time counts once in Total).
	Self, Total int64
	Unit        string
	// SelfInsns and InclInsns are the same in instructions.
	SelfInsns, InclInsns uint64
}

// PTOptions tune AnalyzePT.
type PTOptions struct {
	// Config returns the timing configuration of a raw trace file; !ok
	// means none. nil: intelpt.ConfigOf, the capture.json beside an
	// 'iotap pt capture' directory's buffer, as 'iotap report' reads it.
	Config func(path string) (intelpt.Config, bool)
	// NoCalls skips the call analysis of perf.data files (the flame
	// graph).
	NoCalls bool
	// Calls are the options of the call analysis; nil: those of `iotap
	// pt calls` without flags (files found by their path or in ~/.debug,
	// names demangled, tree depth calls.DefaultTreeDepth).
	Calls *calls.Options
}

// AnalyzePT summarises the PT trace at path, raw or perf.data, streamed
// in constant memory (a perf.data's streams read from the file as they
// are decoded).
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
		config := o.Config
		if config == nil {
			config = intelpt.ConfigOf
		}
		cfg, _ := config(path)
		s, err := intelpt.ComputeStreamStats(ctx, br, nil, -1, cfg, 1)
		if err != nil {
			return nil, fmt.Errorf("pt stats: %s: %w", path, err)
		}
		p.Streams = []PTStream{{Name: path, CPU: -1, Stats: s}}
	} else {
		// a cut file gives what it holds; the cut is in PerfLoss. The
		// streams are read from the file as they are decoded.
		pf, err := intelpt.OpenPerfDataFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer pf.Close()
		tr := pf.PerfTrace
		if len(tr.Streams) == 0 {
			return nil, fmt.Errorf("%s: perf.data holds no PT data (no PERF_RECORD_AUXTRACE: was it recorded with -e intel_pt//?)", path)
		}
		for i := range tr.Streams {
			s := &tr.Streams[i]
			st, err := intelpt.ComputeStatsReader(intelpt.ContextReader(ctx, s.Reader()), tr.Config)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, s.Name(), err)
			}
			p.Streams = append(p.Streams, PTStream{Name: s.Name(), CPU: s.CPU, Stats: st})
		}
		p.PerfLoss = tr.LossSummary()
		if !o.NoCalls {
			p.analyzeCalls(path, o.Calls)
		}
	}
	items := make([]intelpt.StreamStats, len(p.Streams))
	for i, s := range p.Streams {
		items[i] = intelpt.StreamStats{Name: s.Name, CPU: s.CPU, Stats: s.Stats}
	}
	lost = intelpt.StatsLoss(items, nil)
	if p.PerfLoss != "" {
		lost = append(lost, p.PerfLoss)
	}
	if len(lost) > 0 {
		p.Loss = fmt.Sprintf("pt stats: data lost: %v", lost)
	}
	return p, nil
}

// WritePTText prints the summary of 'iotap pt stats' for one stream
// (intelpt.Stats.WriteText).
func WritePTText(out io.Writer, name string, s *intelpt.Stats) { s.WriteText(out, name) }

// analyzeCalls fills the call tree and the time per function of a
// perf.data file, as `iotap pt calls` computes them.
func (p *PT) analyzeCalls(path string, co *calls.Options) {
	in, err := calls.ReadPerfDataFile(path)
	if err != nil {
		p.CallErr = err
		return
	}
	defer in.Close()
	var o calls.Options
	if co != nil {
		o = *co
	} else {
		o = calls.Options{Finder: in.Finder("", nil), Demangle: true}
	}
	gaps := 0
	onGap := o.OnGap
	o.OnGap = func(g *calls.Gap) {
		if gaps++; gaps <= 3 {
			p.CallNotes = append(p.CallNotes, fmt.Sprintf("gap in thread %d at instruction %d: %s", g.Thread, g.Insn, g.Reason))
		}
		if onGap != nil {
			onGap(g)
		}
	}
	res, err := calls.Analyze(in, o)
	if err != nil {
		p.CallErr = err
		return
	}
	for _, u := range res.Unfound {
		p.CallNotes = append(p.CallNotes, fmt.Sprintf("mapping %s not decoded: %v", u.Mapping.String(), u.Err))
	}
	if gaps > 3 {
		p.CallNotes = append(p.CallNotes, fmt.Sprintf("%d gaps in all", gaps))
	}
	p.CallTree, p.CallStats = res.Tree, res.Stats
	p.Calls = functionTimes(res.Tree, calls.Clock{ToNS: in.ToNS}.Unit())
}

// functionTimes sums the call tree per function name: calls, self and
// inclusive instructions and time (inclusive counted once for a function
// that calls itself: at its outermost path).
func functionTimes(root *calls.Node, unit string) []PTFunction {
	byName := map[string]*PTFunction{}
	var order []string
	active := map[string]int{}
	var walk func(n *calls.Node)
	walk = func(n *calls.Node) {
		if n.Count == 0 { // only calls below the resolution
			return
		}
		f := byName[n.Name]
		if f == nil {
			f = &PTFunction{Name: n.Name, Unit: unit}
			byName[n.Name] = f
			order = append(order, n.Name)
		}
		f.Calls += n.Count
		f.SelfInsns += n.SelfInsn
		f.Self += int64(n.SelfTime)
		if active[n.Name] == 0 {
			f.InclInsns += n.InclInsn
			f.Total += int64(n.InclTime)
		}
		active[n.Name]++
		for _, c := range n.Children {
			walk(c)
		}
		active[n.Name]--
	}
	for _, th := range root.Children {
		for _, c := range th.Children {
			walk(c)
		}
	}
	out := make([]PTFunction, 0, len(order))
	for _, name := range order {
		out = append(out, *byName[name])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SelfInsns > out[j].SelfInsns })
	return out
}
