package intelpt

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
)

// The jobs of 'iotap pt dump' and 'pt stats' over an input split by
// ParseInput or streamed: the listing of every stream, the statistics of
// every stream, and what each lost.

// DumpInputOptions select and format the streams DumpInput lists.
type DumpInputOptions struct {
	// File names the input (the NDJSON input record; a raw stream's name
	// in the loss).
	File string
	// JSON lists NDJSON records (DumpJSON) after an input record instead
	// of ptdump's text (Dump).
	JSON bool
	// CPU lists only the stream of that CPU; -1: every stream.
	CPU int
	// Workers, when At reads the same regular file of Size bytes as
	// DumpStream's reader, lists a raw trace's text by segments between
	// PSBs on that many goroutines (DumpFile: the same listing; 0:
	// StatsWorkers decides, as for pt stats, at most 4: the listing is
	// written by one goroutine, and each segment in flight holds its
	// listing in memory; negative: an *ArgError of DumpInput and
	// DumpStream, before anything is written).
	Workers int
	At      io.ReaderAt
	Size    int64
}

// DumpSummary is what DumpInput, DumpStream listed and lost.
type DumpSummary struct {
	// Streams is the number of streams listed (0: none of the CPU asked).
	Streams int
	// Errors counts the decoding errors (each is in the listing, and
	// decoding resumed at the next PSB); Skipped lists, per stream with
	// errors, what they skipped: "NAME: N decoding error(s) (first at
	// 0xOFF), M bytes skipped" (DumpResult.Loss).
	Errors  int64
	Skipped []string
	// Truncated names the streams that end inside a packet: "NAME: last
	// N bytes".
	Truncated []string
	// PerfLoss is the loss a perf.data recorded (PerfTrace.LossSummary).
	PerfLoss string
	stream   *DumpResult // DumpStream's
}

// Loss lists what the listing lacks: bytes that decoding errors skipped,
// streams that end inside a packet, the loss perf recorded. Empty when
// nothing was lost.
func (s *DumpSummary) Loss() []string {
	if r := s.stream; r != nil {
		var lost []string
		if l := r.Loss(); l != "" {
			if r.Errors > 0 {
				l += ", resynchronised at the next PSB"
			}
			lost = append(lost, l+" (see the listing)")
		}
		if r.Truncated {
			lost = append(lost, fmt.Sprintf("trace ends inside a packet (last %d bytes)", r.SkippedTail))
		}
		return lost
	}
	lost := append([]string(nil), s.Skipped...)
	if len(s.Truncated) > 0 {
		lost = append(lost, fmt.Sprintf("trace ends inside a packet (%v)", s.Truncated))
	}
	if s.PerfLoss != "" {
		lost = append(lost, s.PerfLoss)
	}
	return lost
}

// DumpInput lists the streams of in as 'iotap pt dump' does: in ptdump's
// format, a perf.data's stream after a "# NAME: N bytes" line; or with
// o.JSON an NDJSON input record, then each stream's records (named by
// opt.StreamName, opt.StreamCPU). The error is for write failures only:
// what the decoding met is in the summary.
func DumpInput(w io.Writer, in *Input, cfg Config, opt DumpOptions, o DumpInputOptions) (DumpSummary, error) {
	var sum DumpSummary
	if err := checkWorkers("DumpInputOptions.Workers", o.Workers); err != nil {
		return sum, err
	}
	if o.JSON {
		format := FormatRaw
		if in.Perf != nil {
			format = FormatPerfData
		}
		if _, err := w.Write(AppendInputNDJSON(nil, o.File, format, "")); err != nil {
			return sum, err
		}
	}
	for _, s := range in.Streams {
		if o.CPU >= 0 && s.CPU != int32(o.CPU) {
			continue
		}
		sum.Streams++
		var r DumpResult
		var err error
		if o.JSON {
			opt.StreamName, opt.StreamCPU = s.Name, s.CPU
			if s.perf != nil {
				r, err = DumpJSONReader(w, s.Reader(), 0, cfg, opt)
			} else {
				r, err = DumpJSON(w, s.Data, cfg, opt)
			}
		} else {
			if s.Name != "" {
				fmt.Fprintf(w, "# %s: %d bytes\n", s.Name, s.Len())
			}
			if s.perf != nil {
				r, err = DumpReader(w, s.Reader(), 0, cfg, opt)
			} else {
				r, err = Dump(w, s.Data, cfg, opt)
			}
		}
		if err != nil {
			return sum, err
		}
		sum.Errors += r.Errors
		if l := r.Loss(); l != "" {
			sum.Skipped = append(sum.Skipped, s.nameOr(o.File)+": "+l)
		}
		if r.Truncated {
			sum.Truncated = append(sum.Truncated, fmt.Sprintf("%s: last %d bytes", s.nameOr(o.File), r.SkippedTail))
		}
	}
	sum.PerfLoss = in.Perf.LossSummary()
	return sum, nil
}

// DumpStream lists a raw trace read as it comes from r, in constant
// memory (its text by segments on several goroutines when o.At and
// o.Workers say so), as DumpInput lists a stream: ptdump's text, or with o.JSON an
// NDJSON input record naming o.File, then the packets' records. Reading
// stops with ctx's error once ctx is done. Unless opt.NoSync, a trace
// without a PSB is an error wrapping ErrNoPSB (a file's head can be
// checked before, standard input's only so); otherwise the error is for
// read and write failures: what the decoding met is in the summary.
func DumpStream(ctx context.Context, w io.Writer, r io.Reader, cfg Config, opt DumpOptions, o DumpInputOptions) (DumpSummary, error) {
	if err := checkWorkers("DumpInputOptions.Workers", o.Workers); err != nil {
		return DumpSummary{}, err
	}
	r = ContextReader(ctx, r)
	var res DumpResult
	var err error
	if o.JSON {
		opt.StreamName, opt.StreamCPU = "", -1
		if _, err = w.Write(AppendInputNDJSON(nil, o.File, FormatRaw, "")); err == nil {
			res, err = DumpJSONReader(w, r, 0, cfg, opt)
		}
	} else if n := StatsWorkers(o.Size, o.Workers); o.At != nil && n > 1 {
		if o.Workers == 0 {
			n = min(n, dumpAutoWorkers)
		}
		res, err = DumpFile(w, ctxReaderAt{ctx, o.At}, o.Size, cfg, opt, n)
	} else {
		res, err = DumpReader(w, r, 0, cfg, opt)
	}
	sum := DumpSummary{Streams: 1, Errors: res.Errors, stream: &res}
	if err == nil && res.Packets == 0 && !opt.NoSync {
		err = fmt.Errorf("%w: no PSB in %d bytes", ErrNoPSB, res.Skipped)
	}
	return sum, err
}

func (s *InputStream) nameOr(file string) string {
	if s.Name == "" {
		return file
	}
	return s.Name
}

// StreamStats are the statistics of one stream of an input.
type StreamStats struct {
	Name  string // the file of a raw trace, a perf.data's "cpu N"
	CPU   int32  // -1 for a raw trace and per-thread streams
	Stats Stats
}

// InputStats computes the statistics of every stream of in (ComputeStats);
// file names a raw trace's stream. A stream read from its file
// (OpenPerfDataPT) that cannot be read to its end is marked Truncated
// (ReadInputStats returns the error instead).
func InputStats(in *Input, file string, cfg Config) []StreamStats {
	out, _ := readInputStats(context.Background(), in, file, cfg, true)
	return out
}

// ReadInputStats is InputStats, its streams read as they come when they
// are read from their file (a perf.data opened by OpenPerfDataPT, in
// constant memory), stopping with ctx's error once ctx is done. The
// error is for reading.
func ReadInputStats(ctx context.Context, in *Input, file string, cfg Config) ([]StreamStats, error) {
	return readInputStats(ctx, in, file, cfg, false)
}

func readInputStats(ctx context.Context, in *Input, file string, cfg Config, mark bool) ([]StreamStats, error) {
	var out []StreamStats
	for i := range in.Streams {
		s := &in.Streams[i]
		st := StreamStats{Name: s.nameOr(file), CPU: s.CPU}
		if s.perf != nil {
			var err error
			if st.Stats, err = ComputeStatsReader(ContextReader(ctx, s.Reader()), cfg); err != nil {
				if !mark {
					return out, fmt.Errorf("%s: %w", st.Name, err)
				}
				st.Stats.Truncated = true
			}
		} else {
			st.Stats = ComputeStats(s.Data, cfg)
		}
		out = append(out, st)
	}
	return out, nil
}

// StatsWorkers is the number of decoders StreamStats runs on a raw trace
// of size bytes (-1: not a regular file) when workers are asked for (0:
// all cores when there are more than two: on two, the second decoder
// competes with everything else for the other core and costs more CPU
// than it saves wall time, docs/performance.md). 1 means one decoder over
// the stream; more, segments between PSBs (ComputeStatsFile), from
// ParallelStatsMin bytes.
func StatsWorkers(size int64, workers int) int {
	if workers == 0 && runtime.GOMAXPROCS(0) > 2 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers < 2 || size < ParallelStatsMin {
		return 1
	}
	return workers
}

// ComputeStreamStats computes the statistics of a raw trace read as it comes
// from r, or, when ra reads the same regular file of size bytes and
// StatsWorkers says so, by segments on several goroutines (the same
// result). Reading stops with ctx's error once ctx is done. Negative
// workers is an *ArgError.
func ComputeStreamStats(ctx context.Context, r io.Reader, ra io.ReaderAt, size int64, cfg Config, workers int) (Stats, error) {
	if err := checkWorkers("ComputeStreamStats workers", workers); err != nil {
		return Stats{}, err
	}
	if n := StatsWorkers(size, workers); ra != nil && n > 1 {
		return ComputeStatsFile(ctxReaderAt{ctx, ra}, size, cfg, n)
	}
	return ComputeStatsReader(ContextReader(ctx, r), cfg)
}

// StatsLoss lists what the statistics of items say was lost: bytes that
// decoding errors skipped, overflows (the CPU dropped trace), a tail cut
// inside a packet ("NAME: trace ends inside a packet at offset 0xOFF
// (last N bytes)", as FlowLoss and calls.Result.Cut say it), the loss
// perf recorded (perf, nil for a raw trace).
func StatsLoss(items []StreamStats, perf *PerfTrace) []string {
	var lost []string
	for _, it := range items {
		if l := it.Stats.Loss(); l != "" {
			lost = append(lost, it.Name+": "+l)
		}
		if it.Stats.Overflows > 0 {
			lost = append(lost, fmt.Sprintf("%s: %d overflow(s)", it.Name, it.Stats.Overflows))
		}
		if it.Stats.Truncated {
			lost = append(lost, it.Name+": "+truncatedTail(&it.Stats))
		}
	}
	if l := perf.LossSummary(); l != "" {
		lost = append(lost, l)
	}
	return lost
}

// WriteStats writes the statistics of 'iotap pt stats': a summary per
// stream (Stats.WriteText) or, asJSON, an NDJSON input record for file
// (perf: the perf.data's, nil for a raw trace) and a pt_stats record per
// stream.
func WriteStats(w io.Writer, file string, items []StreamStats, perf *PerfTrace, asJSON bool) error {
	if !asJSON {
		for i := range items {
			items[i].Stats.WriteText(w, items[i].Name)
		}
		return nil
	}
	format := FormatRaw
	if perf != nil {
		format = FormatPerfData
	}
	b := AppendInputNDJSON(nil, file, format, "")
	for i := range items {
		b = AppendStatsNDJSON(b, "", items[i].Name, items[i].CPU, &items[i].Stats)
	}
	_, err := w.Write(b)
	return err
}

// Loss describes what decoding errors skipped ("" when there was no
// error): the errors, the first one's offset, the bytes skipped (all the
// bytes not decoded, SkippedBytes).
func (s *Stats) Loss() string {
	first := int64(0)
	if len(s.ErrorOffsets) > 0 {
		first = s.ErrorOffsets[0]
	}
	return decodeLoss(s.Errors, first, s.SkippedBytes)
}

// WriteText writes the summary of 'iotap pt stats' for the stream name:
// bytes, packets, PSBs and their spacing, overflows, errors (the first
// offset), bytes skipped, truncation, the TSC span, packets by kind.
func (s *Stats) WriteText(out io.Writer, name string) {
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
	for _, k := range Kinds() {
		if n := s.Count(k); n > 0 {
			fmt.Fprintf(w, "  %s\t%d\n", k, n)
		}
	}
	w.Flush()
}

// ContextReader returns r, whose reads fail with ctx's error once ctx is
// done (a decoder reading it stops at Ctrl-C).
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(b []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(b, off)
}

// FlowLoss lists what an instruction listing of trace (FlowListing with
// cfg) lacks: the bytes that decoding errors skipped (decoding resumed
// at the next PSB) and the overflows (the CPU dropped trace data), each
// seen in the listing, and a tail cut inside a packet (which the listing
// does not show, as ptxed's). Empty when nothing was lost.
func FlowLoss(trace []byte, cfg Config) []string {
	return flowLoss(ComputeStats(trace, cfg))
}

// truncatedTail describes the tail of a trace that ends inside a packet
// (st.Truncated): "trace ends inside a packet at offset 0xOFF (last N
// bytes)", or "truncated tail" when a read error cut it (TruncatedAt 0:
// a packet cut inside a trace is after its first PSB).
func truncatedTail(st *Stats) string {
	if st.TruncatedAt == 0 {
		return "truncated tail"
	}
	return fmt.Sprintf("trace ends inside a packet at offset %#x (last %d bytes)", st.TruncatedAt, st.Bytes-st.TruncatedAt)
}

// flowLoss is FlowLoss of the trace whose statistics are st.
func flowLoss(st Stats) []string {
	var lost []string
	if st.PSBs == 0 && st.Bytes > 0 {
		// Decoding starts at a PSB: without one nothing was decoded and
		// the listing is empty, as ptxed's, which says nothing about it.
		lost = append(lost, fmt.Sprintf("%v: no PSB in %d bytes, nothing decoded", ErrNoPSB, st.Bytes))
	}
	if l := st.Loss(); l != "" {
		lost = append(lost, l+", decoding resumed at the next PSB (see the listing)")
	}
	if st.Overflows > 0 {
		lost = append(lost, fmt.Sprintf("%d overflow(s) (see the listing)", st.Overflows))
	}
	if st.Truncated {
		lost = append(lost, truncatedTail(&st))
	}
	return lost
}
