package intelpt

import (
	"io"
	"math"
)

// dumpSegmentSize is the length of the segments DumpFile cuts (at the
// next PSB after each multiple): a segment's listing (about 14 times its
// size) is held until the segments before it are written, so segments
// are short.
const dumpSegmentSize = 256 << 10

// dumpAutoWorkers caps the goroutines DumpStream chooses itself.
const dumpAutoWorkers = 4

// DumpFile is DumpReader over r, a regular file of size bytes, on workers
// goroutines, each listing a segment between PSBs, written in order:
// the same listing and result as DumpReader's. Segments are used only
// when workers > 1, the trace is at least ParallelStatsMin bytes and a
// segment's listing does not depend on the packets before it (not with
// LastIP, Time, TCal or NoSync); otherwise it is DumpReader. The listings
// of at most workers+1 segments are held in memory. Negative workers is
// an *ArgError.
func DumpFile(w io.Writer, r io.ReaderAt, size int64, cfg Config, opt DumpOptions, workers int) (DumpResult, error) {
	if err := checkWorkers("DumpFile workers", workers); err != nil {
		return DumpResult{}, err
	}
	if workers < 2 || size < ParallelStatsMin {
		workers = 1
	}
	return dumpFile(w, r, size, cfg, opt, workers, dumpSegmentSize)
}

// dumpSeg is a segment's listing, in chunks as the dumper flushes them,
// and its result.
type dumpSeg struct {
	chunks chan []byte // closed after res, over and err are set
	res    DumpResult
	over   bool  // a packet or resync crossed the segment's end: decoded to the trace's end
	err    error // read error
}

func dumpFile(w io.Writer, r io.ReaderAt, size int64, cfg Config, opt DumpOptions, workers int, segSize int64) (DumpResult, error) {
	serial := func() (DumpResult, error) {
		return DumpReader(w, io.NewSectionReader(r, 0, size), 0, cfg, opt)
	}
	if workers < 2 || size < 2*segSize || opt.LastIP || opt.Time || opt.TCal || opt.NoSync {
		return serial()
	}
	probe := newDumper(io.Discard, cfg, &opt) // the decoder configuration
	cuts, err := psbCuts(r, size, probe.cfg, segSize)
	if err != nil || len(cuts) == 0 {
		return serial()
	}
	starts := append([]int64{0}, cuts...)
	segs := make([]dumpSeg, len(starts))
	for i := range segs {
		segs[i].chunks = make(chan []byte, 64)
	}
	free := make(chan []byte, 64) // chunks written, for reuse (the segments in flight hold about 15 each)
	// At most workers+1 segments are listed or waiting to be written.
	sched := startSegments(len(starts), workers, func(jobs <-chan int, done <-chan struct{}) {
		window := make([]byte, 64<<10) // each segment's decoder's
		for i := range jobs {
			end := int64(math.MaxInt64)
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			dumpSegment(&segs[i], r, size, starts[i], end, i > 0, cfg, &opt, done, free, window)
		}
	})
	defer sched.stop()
	var total DumpResult
	for i := range segs {
		s := &segs[i]
		var werr error
		for c := range s.chunks {
			if werr == nil {
				_, werr = w.Write(c)
			}
			select {
			case free <- c[:0]:
			default:
			}
		}
		sched.merged()
		if werr != nil {
			return total, werr
		}
		total.Packets += s.res.Packets
		if s.res.Errors > 0 && total.Errors == 0 {
			total.FirstError = s.res.FirstError
		}
		total.Errors += s.res.Errors
		total.Skipped += s.res.Skipped
		total.Overflows += s.res.Overflows
		total.Truncated, total.SkippedTail = s.res.Truncated, s.res.SkippedTail
		if s.err != nil {
			return total, s.err
		}
		if s.over {
			break
		}
	}
	return total, nil
}

// dumpSegment lists the segment of r from start to end (a PSB; start 0:
// the trace's start, synchronised at its first PSB; atCut: start is a
// PSB where the listing before ended) into s's chunks. It stops at end
// when a packet or resync ends there; otherwise it goes on to the
// trace's end, as one pass would (s.over).
func dumpSegment(s *dumpSeg, r io.ReaderAt, size, start, end int64, atCut bool, cfg Config, opt *DumpOptions, done <-chan struct{}, free chan []byte, window []byte) {
	defer close(s.chunks)
	// Buffers are reused: an allocation per segment would run the
	// collector, and its write barriers on every line.
	chunk := func() []byte {
		select {
		case c := <-free:
			return c
		default:
			return make([]byte, 0, dumpFlushAt+dumpSlack)
		}
	}
	dp := newDumperBuf(nil, cfg, opt, chunk())
	if atCut {
		dp.out = dp.out[:0] // the errata diagnostic is the first segment's
	}
	dp.hand = func(c []byte) ([]byte, error) {
		if len(c) == 0 {
			return c, nil
		}
		select {
		case s.chunks <- c:
		case <-done:
			return c[:0], errDumpDone
		}
		return chunk(), nil
	}
	from := start &^ 7 // the stream's word alignment for PSB search
	d := streamDecoderWith(io.NewSectionReader(r, from, size-from), dp.cfg, window)
	d.base = from // offsets of the whole file
	if atCut {
		d.startAt(start)
		dp.atCut = true
	}
	dp.stopAt = end
	dp.run(d)
	dp.flush()
	if len(dp.out) == 0 && cap(dp.out) > 0 {
		select {
		case free <- dp.out:
		default:
		}
	}
	s.res, s.over, s.err = dp.res, dp.over, d.Err()
}

// errDumpDone ends a segment's listing that is no longer wanted.
var errDumpDone = io.ErrClosedPipe
