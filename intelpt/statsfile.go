package intelpt

import (
	"encoding/binary"
	"io"
	"runtime"
)

// ComputeStatsFile is ComputeStatsReader over a file of size bytes that
// can be read at any offset: the trace is cut at PSBs into segments that
// up to workers goroutines decode at the same time (0: GOMAXPROCS), in
// constant memory. The result is the one ComputeStatsReader returns:
// counts and PSB spacing are summed over segments, and the timing packets
// each segment saw are replayed through one TimeTracker in stream order,
// so time estimates carry across segments as they do in one pass. Where a
// cut could change what one pass decodes (a packet crossing it, a run of
// PSB patterns before it), the file is decoded in one pass instead.
// TestComputeStatsFileMatchesReader checks the equality on corrupted and
// truncated traces with tiny segments. Negative workers is an *ArgError.
func ComputeStatsFile(r io.ReaderAt, size int64, cfg Config, workers int) (Stats, error) {
	if err := checkWorkers("ComputeStatsFile workers", workers); err != nil {
		return Stats{}, err
	}
	return computeStatsFile(r, size, cfg, workers, statsSegmentSize)
}

// statsSegmentSize is the length of the segments ComputeStatsFile cuts
// (at the next PSB after each multiple): large enough that a segment's
// start-up is negligible, small enough that the timing packets it records
// stay a few MB.
const statsSegmentSize = 8 << 20

// ParallelStatsMin is the trace size from which ComputeStatsFile cuts a
// trace in segments at all.
const ParallelStatsMin = 2 * statsSegmentSize

func computeStatsFile(r io.ReaderAt, size int64, cfg Config, workers int, segSize int64) (Stats, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	serial := func() (Stats, error) {
		return ComputeStatsReader(io.NewSectionReader(r, 0, size), cfg)
	}
	if workers < 2 || size < 2*segSize {
		return serial()
	}
	cuts, err := psbCuts(r, size, cfg, segSize)
	if err != nil || len(cuts) == 0 {
		return serial()
	}
	starts := append([]int64{0}, cuts...)
	type result struct {
		s   Stats
		seg statsSeg
		log timingLog
		err error
	}
	results := make([]chan result, len(starts))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	// At most workers+1 segments are decoded or waiting to be merged.
	sched := startSegments(len(starts), workers, func(jobs <-chan int, _ <-chan struct{}) {
		for i := range jobs {
			from := starts[i] &^ 7 // the stream's word alignment for PSB search
			end := size
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			d := NewStreamDecoder(io.NewSectionReader(r, from, end-from), cfg, 256<<10)
			d.base = from // offsets of the whole file
			var res result
			res.s, res.seg = computeStatsSeg(d, &res.log)
			res.err = d.Err()
			results[i] <- res
		}
	})
	defer sched.stop()
	var (
		total   Stats
		lastPSB = int64(-1)
		gapSum  int64
		haveGap bool
		tm      = NewTimeTracker(cfg)
	)
	for i := range starts {
		res := <-results[i]
		sched.merged()
		if res.err != nil {
			return Stats{}, res.err
		}
		s := &res.s
		last := i == len(starts)-1
		if !last && s.Truncated {
			return serial() // a packet crosses the cut
		}
		if i > 0 {
			// The worker synchronised on the PSB at the cut: the bytes
			// before it (its SkippedBytes start there) were the previous
			// segment's.
			s.SkippedBytes -= starts[i]
			if res.seg.firstPSB != starts[i] {
				return serial()
			}
		}
		total.Packets += s.Packets
		for k := range total.ByKind {
			total.ByKind[k] += s.ByKind[k]
		}
		total.Overflows += s.Overflows
		total.Errors += s.Errors
		for _, o := range s.ErrorOffsets {
			if len(total.ErrorOffsets) < maxErrorOffsets {
				total.ErrorOffsets = append(total.ErrorOffsets, o)
			}
		}
		total.SkippedBytes += s.SkippedBytes
		total.Truncated, total.TruncatedAt = s.Truncated, s.TruncatedAt
		if s.PSBs > 0 {
			addGap := func(g int64) {
				if !haveGap || g < total.PSBGapMin {
					total.PSBGapMin = g
				}
				total.PSBGapMax = max(total.PSBGapMax, g)
				haveGap = true
			}
			if lastPSB >= 0 {
				g := res.seg.firstPSB - lastPSB
				addGap(g)
				gapSum += g
			}
			if s.PSBs > 1 {
				addGap(s.PSBGapMin)
				addGap(s.PSBGapMax)
				gapSum += res.seg.gapSum
			}
			lastPSB = res.seg.lastPSB
			total.PSBs += s.PSBs
		}
		res.log.replay(tm, &total)
	}
	if total.PSBs > 1 {
		total.PSBGapMean = gapSum / (total.PSBs - 1)
	}
	total.Bytes = size
	return total, nil
}

// psbCuts returns where to cut the trace: the PSB at or after each
// multiple of segSize as one pass would find it, leaving out cuts that
// one pass might see differently (a PSB pattern run across the cut).
func psbCuts(r io.ReaderAt, size int64, cfg Config, segSize int64) ([]int64, error) {
	var cuts []int64
	segSize &^= 7
	window := make([]byte, 64<<10) // one for every search
	for at := segSize; at < size-segSize/2; at += segSize {
		if n := len(cuts); n > 0 && cuts[n-1] >= at {
			continue
		}
		d := streamDecoderWith(io.NewSectionReader(r, at, size-at), cfg, window)
		if d.SyncForward() != nil {
			if err := d.Err(); err != nil {
				return nil, err
			}
			break // no PSB after at
		}
		p := at + d.Offset()
		if p < 2 || p >= size {
			continue
		}
		var before [2]byte
		if _, err := r.ReadAt(before[:], p-2); err != nil {
			return nil, err
		}
		if before == [2]byte{0x02, 0x82} {
			continue // the end of a run of PSB patterns
		}
		cuts = append(cuts, p)
	}
	return cuts, nil
}

// buildTimingKind builds timingKind (tables_gen.go), which marks the
// packets TimeTracker.Update reads.
func buildTimingKind() (t [numKinds]bool) {
	for _, k := range []Kind{KindPSB, KindPSBEnd, KindOVF, KindTSC, KindCBR, KindTMA, KindMTC, KindCYC} {
		t[k] = true
	}
	return t
}

// timingLog records timing packets compactly: a kind byte, then the
// payload (and for TMA the Aux field) as uvarints; resetMark for a
// tracker reset.
type timingLog struct{ b []byte }

const resetMark = 0xff

func (l *timingLog) add(p *Packet) {
	l.b = append(l.b, byte(p.Kind))
	switch p.Kind {
	case KindPSB, KindPSBEnd, KindOVF:
		return
	case KindTMA:
		l.b = binary.AppendUvarint(l.b, uint64(p.Aux))
	}
	l.b = binary.AppendUvarint(l.b, p.Payload)
}

func (l *timingLog) reset() { l.b = append(l.b, resetMark) }

// replay feeds the recorded packets to tm as one pass would and notes
// the time estimates in s (as computeStatsSeg does).
func (l *timingLog) replay(tm *TimeTracker, s *Stats) {
	b := l.b
	var p Packet
	for len(b) > 0 {
		k := b[0]
		b = b[1:]
		if k == resetMark {
			tm.Reset()
			continue
		}
		p = Packet{Kind: Kind(k)}
		switch p.Kind {
		case KindPSB, KindPSBEnd, KindOVF:
		case KindTMA:
			aux, n := binary.Uvarint(b)
			b = b[n:]
			p.Aux = uint32(aux)
			fallthrough
		default:
			v, n := binary.Uvarint(b)
			b = b[n:]
			p.Payload = v
		}
		if tm.Update(&p) {
			if tsc, ok := tm.TSC(); ok {
				if !s.HaveTime {
					s.HaveTime, s.FirstTSC = true, tsc
				}
				s.LastTSC = max(s.LastTSC, tsc)
			}
		}
	}
}
