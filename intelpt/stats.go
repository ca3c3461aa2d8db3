package intelpt

import (
	"errors"
	"io"
)

// Stats summarises a trace.
type Stats struct {
	Bytes   int64
	Packets int64
	ByKind  [numKinds]int64 // packets by Kind
	// PSB spacing in bytes (distance between consecutive PSBs).
	PSBs                             int64
	PSBGapMin, PSBGapMax, PSBGapMean int64
	Overflows                        int64 // OVF packets: the CPU dropped trace data
	Errors                           int64 // decoding errors (resynced at the next PSB)
	ErrorOffsets                     []int64
	SkippedBytes                     int64 // bytes not decoded: before the first PSB, after errors, truncated tail
	Truncated                        bool
	// Time span from TSC (and MTC/TMA when Config has the CPUID 0x15 ratio).
	HaveTime          bool
	FirstTSC, LastTSC uint64
}

// Count returns the number of packets of kind k.
func (s *Stats) Count(k Kind) int64 {
	if k < numKinds {
		return s.ByKind[k]
	}
	return 0
}

// maxErrorOffsets caps Stats.ErrorOffsets.
const maxErrorOffsets = 100

// ComputeStats decodes buf from its first PSB and summarises it.
func ComputeStats(buf []byte, cfg Config) Stats {
	d := NewDecoder(buf, cfg)
	return computeStats(d, cfg, func() int64 { return int64(len(buf)) })
}

// ComputeStatsReader is ComputeStats over a stream, in constant memory.
func ComputeStatsReader(r io.Reader, cfg Config) (Stats, error) {
	d := NewStreamDecoder(r, cfg, 0)
	s := computeStats(d, cfg, func() int64 { return d.base + int64(len(d.d.buf)) })
	return s, d.Err()
}

// statsSource is what computeStats decodes from.
type statsSource interface {
	Next(*Packet) error
	Offset() int64
	SyncForward() error
}

func computeStats(d statsSource, cfg Config, size func() int64) Stats {
	var s Stats
	if d.SyncForward() != nil {
		s.SkippedBytes = size()
		s.Bytes = size()
		return s
	}
	s.SkippedBytes = d.Offset()
	var p Packet
	tm := NewTimeTracker(cfg)
	lastPSB := int64(-1)
	var gapSum int64
	note := func() {
		if tsc, ok := tm.TSC(); ok {
			if !s.HaveTime {
				s.HaveTime, s.FirstTSC = true, tsc
			}
			s.LastTSC = max(s.LastTSC, tsc)
		}
	}
	for {
		off := d.Offset()
		err := d.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, ErrTruncated) {
				s.Truncated = true
				s.SkippedBytes += size() - off
				break
			}
			s.Errors++
			if len(s.ErrorOffsets) < maxErrorOffsets {
				s.ErrorOffsets = append(s.ErrorOffsets, off)
			}
			if d.SyncForward() != nil {
				s.SkippedBytes += size() - off
				break
			}
			s.SkippedBytes += max(d.Offset()-off, 0)
			tm.Reset()
			continue
		}
		s.Packets++
		s.ByKind[p.Kind]++
		switch p.Kind {
		case KindPSB:
			if lastPSB >= 0 {
				g := off - lastPSB
				if s.PSBs == 1 || g < s.PSBGapMin {
					s.PSBGapMin = g
				}
				s.PSBGapMax = max(s.PSBGapMax, g)
				gapSum += g
			}
			lastPSB = off
			s.PSBs++
		case KindOVF:
			s.Overflows++
		}
		if tm.Update(&p) {
			note()
		}
	}
	if s.PSBs > 1 {
		s.PSBGapMean = gapSum / (s.PSBs - 1)
	}
	s.Bytes = size()
	return s
}
