package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/perfdata"
)

// ptTrace is an Intel PT input made ready for export: its streams with
// their decoding configuration, and what calls.Analyze needs (nil for a
// raw trace, which has no sideband to tell the code it ran).
type ptTrace struct {
	format  string
	streams []intelpt.PerfStream
	names   []string
	cfg     intelpt.Config
	calls   *calls.Input // its BuildIDDirs: a capture directory's binaries/
	loss    []string
	// raw reads a raw trace, its one stream (whose Data is nil): its
	// statistics are computed as it is read, in constant memory.
	raw io.Reader
	// closer closes the perf.data the streams are read from.
	closer io.Closer
}

// Close closes the files the trace's streams are read from.
func (t *ptTrace) Close() {
	if t.closer != nil {
		t.closer.Close()
	}
	if t.calls != nil {
		t.calls.Close()
	}
}

// readPT reads a perf.data file or a raw trace (with the capture.json of
// its capture directory, when it has one, for the timing parameters).
// A raw trace is read by exportPT, from f: f stays open until then.
func (x *Exporter) readPT(in inputFile, f *os.File) (*ptTrace, error) {
	br := bufio.NewReaderSize(x.input(in, f), 1<<20)
	head, err := br.Peek(len(perfdata.Magic))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("export: %s: %w", in.path, err)
	}
	if !intelpt.IsPerfData(head) {
		cfg := intelpt.Config{}
		if ci, _, ok := intelpt.CaptureInfoOf(in.path); ok {
			cfg = ci.DecoderConfig()
		}
		return &ptTrace{format: "raw", cfg: cfg, streams: []intelpt.PerfStream{{CPU: -1, TID: -1}}, names: []string{in.path}, raw: br}, nil
	}
	// A cut perf.data gives what it holds; the cut is loss. Its streams
	// are read from the file as they are decoded, never held.
	cin, err := calls.ReadPerfDataFile(in.path)
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", in.path, err)
	}
	pf, err := intelpt.OpenPerfDataFile(in.path)
	if err != nil {
		cin.Close()
		return nil, fmt.Errorf("export: %s: %w", in.path, err)
	}
	tr := pf.PerfTrace
	if len(tr.Streams) == 0 {
		cin.Close()
		pf.Close()
		return nil, fmt.Errorf("export: %s: perf.data holds no PT data (no PERF_RECORD_AUXTRACE: was it recorded with -e intel_pt//?)", in.path)
	}
	t := &ptTrace{format: "perf.data", streams: tr.Streams, cfg: tr.Config, calls: cin, closer: pf}
	for _, s := range tr.Streams {
		t.names = append(t.names, s.Name())
	}
	if l := tr.LossSummary(); l != "" {
		t.loss = append(t.loss, l)
	}
	if cin.Loss != "" {
		t.loss = append(t.loss, "sideband: "+cin.Loss)
	}
	return t, nil
}

// readPTDir reads an 'iotap pt capture' directory (capture.json,
// cpuN.pt, cpuN.sideband, binaries/).
func readPTDir(dir string) (*ptTrace, error) {
	cin, err := calls.ReadCaptureDir(dir)
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", dir, err)
	}
	ci, err := intelpt.ReadCaptureInfo(dir)
	if err != nil {
		cin.Close()
		return nil, fmt.Errorf("export: %s: %w", dir, err)
	}
	cin.BuildIDDirs = []string{filepath.Join(dir, intelpt.BinariesDir)}
	t := &ptTrace{format: "pt capture", streams: cin.Streams, cfg: cin.Config, calls: cin}
	for _, b := range ci.Buffers {
		t.names = append(t.names, b.File)
	}
	if cin.Loss != "" {
		t.loss = append(t.loss, cin.Loss)
	}
	return t, nil
}

// exportPT writes pt_stats (one row per stream) and, when the trace has
// its sideband (perf.data, capture directory), pt_calls (one row per
// function call, as 'iotap pt calls --json').
func (x *Exporter) exportPT(ctx context.Context, c *capture, path string, t *ptTrace, row *CaptureRow) error {
	row.Source, row.Format = "pt", t.format
	clock := "tsc"
	var toNS func(uint64) uint64
	if t.calls != nil && t.calls.ToNS != nil {
		clock, toNS = "perf", t.calls.ToNS
	}
	row.ClockDomain = clock
	id := c.id
	id.SourceFile, id.ClockDomain = path, clock
	stats := &lazyTable[PTStatsRow]{x: x, name: TablePTStats, c: c, src: path}
	var lost []string
	var first, last *int64
	for i, s := range t.streams {
		if err := ctx.Err(); err != nil {
			stats.abort()
			return err
		}
		var st intelpt.Stats
		if t.raw != nil {
			var err error
			if st, err = intelpt.ComputeStatsReader(intelpt.ContextReader(ctx, t.raw), t.cfg); err != nil {
				stats.abort()
				return fmt.Errorf("export: %s: %w", path, err)
			}
			if st.PSBs == 0 && st.Bytes > 0 { // as pt stats: not a raw trace (e.g. a compressed one)
				stats.abort()
				return fmt.Errorf("export: %s: %w: no PSB in %d bytes", path, intelpt.ErrNoPSB, st.Bytes)
			}
		} else {
			// read from the file as it is decoded (a perf.data's
			// AUXTRACE records, a capture directory's cpuN.pt)
			var err error
			if st, err = intelpt.ComputeStatsReader(intelpt.ContextReader(ctx, s.Reader()), t.cfg); err != nil {
				stats.abort()
				return fmt.Errorf("export: %s: %s: %w", path, t.names[i], err)
			}
		}
		r, err := stats.next()
		if err != nil {
			return err
		}
		*r = PTStatsRow{Identity: id, Stream: t.names[i], Bytes: st.Bytes, Packets: st.Packets, PSBs: st.PSBs,
			Overflows: st.Overflows, Errors: st.Errors, SkippedBytes: st.SkippedBytes, Truncated: st.Truncated, Kinds: map[string]int64{}}
		if st.PSBs >= 2 {
			r.PSBGapMin, r.PSBGapMean, r.PSBGapMax = ptr(st.PSBGapMin), ptr(st.PSBGapMean), ptr(st.PSBGapMax)
		}
		if s.CPU >= 0 {
			r.CPU = ptr(s.CPU)
		}
		for _, k := range intelpt.Kinds() {
			if n := st.Count(k); n > 0 {
				r.Kinds[k.String()] = n
			}
		}
		if st.HaveTime {
			r.FirstTSC, r.LastTSC = ptr(st.FirstTSC), ptr(st.LastTSC)
			f, l := int64(st.FirstTSC), int64(st.LastTSC)
			if toNS != nil {
				f, l = int64(toNS(st.FirstTSC)), int64(toNS(st.LastTSC))
			}
			if first == nil || f < *first {
				first = ptr(f)
			}
			if last == nil || l > *last {
				last = ptr(l)
			}
		}
		if len(st.ErrorOffsets) > 0 {
			r.FirstErrorOffset = ptr(st.ErrorOffsets[0])
		}
		row.Records += st.Packets
		row.LostEvents += st.Overflows
		row.Truncated = row.Truncated || st.Truncated
		// bytes skipped by decoding errors, overflows, a tail cut inside
		// a packet (its offset), as pt stats says them
		lost = append(lost, intelpt.StatsLoss([]intelpt.StreamStats{{Name: t.names[i], Stats: st}}, nil)...)
	}
	row.FirstTSNS, row.LastTSNS = first, last
	lost = append(lost, t.loss...)
	if t.calls != nil {
		gaps, err := x.exportPTCalls(ctx, c, id, t, toNS)
		var nc *noCallsError
		switch {
		case errors.As(err, &nc):
			// The trace cannot be followed (no context switches on a
			// CPU's trace, ...): its statistics are still exported.
			row.Complete = false
			lost = append(lost, "calls not decoded: "+nc.err.Error())
		case err != nil:
			stats.abort()
			return err
		}
		if gaps > 0 {
			lost = append(lost, fmt.Sprintf("%d gap(s) in the calls (overflow, decoding error, code not found)", gaps))
		}
	}
	row.Loss = strings.Join(lost, "; ")
	return stats.commit()
}

// exportPTCalls decodes the calls of every thread into pt_calls: rows in
// the order calls end (callees before their caller), per stream. It
// returns the gaps of the decoding.
func (x *Exporter) exportPTCalls(ctx context.Context, c *capture, id Identity, t *ptTrace, toNS func(uint64) uint64) (int, error) {
	out := &lazyTable[PTCallRow]{x: x, name: TablePTCalls, c: c, src: id.SourceFile}
	// children[tid][d] sums the time of the calls at depth d that ended
	// since the last call at depth d-1 of the thread ended: its callees.
	// Kept in ticks and, when toNS converts them, in ns.
	children := map[int32][][2]int64{}
	// ns holds the optional ns columns of the rows of a batch, by slot:
	// one pointer each, allocated once, not three allocations a row (the
	// most of this export's allocation, which let the heap grow to twice
	// its live size).
	var ns [][3]int64
	if toNS != nil {
		ns = make([][3]int64, batchRows)
	}
	var werr error
	o := calls.Options{Finder: t.calls.Finder(x.opt.PTSysroot, x.opt.PTBuildIDDirs), Demangle: true, TreeDepth: 1}
	n := 0
	o.OnCall = func(cl *calls.Call) {
		if werr != nil {
			return
		}
		if n++; n&4095 == 0 {
			werr = ctx.Err()
		}
		var dur [2]int64
		if cl.End > cl.Begin {
			dur[0] = int64(cl.End - cl.Begin)
		}
		var beginNS, endNS int64
		if toNS != nil {
			beginNS, endNS = int64(toNS(cl.Begin)), int64(toNS(cl.End))
			dur[1] = max(endNS-beginNS, 0)
		}
		acc := children[cl.Thread]
		for len(acc) <= cl.Depth+1 {
			acc = append(acc, [2]int64{})
		}
		var self [2]int64
		for u := range self {
			self[u] = max(dur[u]-acc[cl.Depth+1][u], 0)
			acc[cl.Depth][u] += dur[u]
		}
		acc[cl.Depth+1] = [2]int64{}
		children[cl.Thread] = acc
		r, err := out.next()
		if err != nil {
			werr = err
			return
		}
		*r = PTCallRow{Identity: id, TID: cl.Thread, Depth: int32(cl.Depth), Func: cl.Func, Entry: cl.Entry,
			BeginTSC: cl.Begin, EndTSC: cl.End, SelfTSC: uint64(self[0]), CallKind: cl.Kind, EndReason: cl.EndReason,
			Insns: int64(cl.EndInsn - cl.BeginInsn), SelfInsns: int64(cl.SelfInsn)}
		if ns != nil {
			v := &ns[out.slot()]
			*v = [3]int64{beginNS, endNS, self[1]}
			r.BeginNS, r.EndNS, r.SelfNS = &v[0], &v[1], &v[2]
		}
	}
	res, err := calls.Analyze(t.calls, o)
	if err != nil && werr == nil {
		out.abort()
		return 0, &noCallsError{err}
	}
	if werr != nil {
		out.abort()
		return 0, fmt.Errorf("export: %s: %w", id.SourceFile, werr)
	}
	return res.Gaps, out.commit()
}

// noCallsError says that the calls of a trace could not be decoded.
type noCallsError struct{ err error }

func (e *noCallsError) Error() string { return "calls not decoded: " + e.err.Error() }
