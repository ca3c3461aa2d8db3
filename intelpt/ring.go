package intelpt

import (
	"encoding/binary"
	"fmt"
)

// Ring arithmetic of perf's AUX area and sideband ring. Heads and tails are
// free-running byte counts; the position in the ring is the count modulo its
// size (a power of two).

// BufferInfo tells where tracing stopped in a buffer (the seed API's
// "buffer info"): the set of chunks is one virtual buffer.
type BufferInfo struct {
	Size uint64 // bytes in the buffer (chunks × chunk size)
	Head uint64 // bytes the CPU wrote since the start (free running)
	Tail uint64 // bytes consumed (stop-on-full mode)
	// CaptureEnd is, in circular mode, the offset in the buffer where
	// tracing stopped; in stop-on-full mode, the amount of data captured
	// (not yet drained).
	CaptureEnd uint64
	Wrapped    bool // circular mode: the CPU overwrote older data
	Full       bool // stop-on-full mode: the buffer filled up (tracing paused)
}

// Info computes the buffer info from head and tail.
func ringInfo(size, head, tail uint64, circular bool) BufferInfo {
	bi := BufferInfo{Size: size, Head: head, Tail: tail}
	if size == 0 {
		return bi
	}
	if circular {
		bi.CaptureEnd = head % size
		bi.Wrapped = head > size
		if head != 0 && bi.CaptureEnd == 0 && !bi.Wrapped {
			bi.CaptureEnd = size
		}
	} else {
		bi.Full = head-tail >= size
		bi.CaptureEnd = head - tail
	}
	return bi
}

// ringCopy appends to dst the bytes [from, to) of a ring (free-running
// positions, to-from <= len(ring)), unwrapping them.
func ringCopy(dst, ring []byte, from, to uint64) ([]byte, error) {
	n := uint64(len(ring))
	if to < from || to-from > n {
		return dst, fmt.Errorf("intelpt: ring positions %d..%d do not fit a %d-byte ring", from, to, n)
	}
	if from == to {
		return dst, nil
	}
	a, b := from%n, to%n
	if a < b {
		return append(dst, ring[a:b]...), nil
	}
	dst = append(dst, ring[a:]...)
	return append(dst, ring[:b]...), nil
}

// auxData returns the trace in an AUX ring: in circular mode the last
// min(head, size) bytes before head (oldest first); in stop-on-full mode
// the bytes between tail and head.
func auxData(dst, ring []byte, head, tail uint64, circular bool) ([]byte, error) {
	n := uint64(len(ring))
	if circular {
		from := uint64(0)
		if head > n {
			from = head - n
		}
		return ringCopy(dst, ring, from, head)
	}
	return ringCopy(dst, ring, tail, head)
}

// SidebandStats counts the perf records of a sideband ring.
type SidebandStats struct {
	Records      int            `json:"records"`
	ByType       map[string]int `json:"by_type"`
	AuxRecords   int            `json:"aux_records"`
	AuxBytes     uint64         `json:"aux_bytes"`
	Truncated    int            `json:"aux_truncated"`
	Partial      int            `json:"aux_partial"`
	Collision    int            `json:"aux_collision"`
	Overwrite    int            `json:"aux_overwrite"`
	Lost         uint64         `json:"lost_records"`
	BadRecords   int            `json:"bad_records"`
	ItraceStarts int            `json:"itrace_starts"`
}

// Lossy reports whether the kernel reported lost trace or sideband data.
func (s *SidebandStats) Lossy() bool {
	return s.Truncated+s.Partial+s.Collision+s.BadRecords > 0 || s.Lost > 0
}

var recordNames = map[uint32]string{
	1: "mmap", 2: "lost", 3: "comm", 4: "exit", 7: "fork", 10: "mmap2", 11: "aux",
	12: "itrace_start", 13: "lost_samples", 14: "switch", 15: "switch_cpu_wide",
	16: "namespaces", 17: "ksymbol", 20: "text_poke", 21: "aux_output_hw_id",
}

// parseSideband counts the records in b (perf records, unwrapped) and
// accumulates AUX flags as loss.
func parseSideband(b []byte, s *SidebandStats) {
	if s.ByType == nil {
		s.ByType = map[string]int{}
	}
	le := binary.LittleEndian
	for len(b) >= 8 {
		typ := le.Uint32(b)
		size := int(le.Uint16(b[6:]))
		if size < 8 || size > len(b) {
			s.BadRecords++
			return
		}
		rec := b[:size]
		s.Records++
		name := recordNames[typ]
		if name == "" {
			name = fmt.Sprintf("type_%d", typ)
		}
		s.ByType[name]++
		switch typ {
		case perfRecordAux:
			if size >= 32 {
				s.AuxRecords++
				s.AuxBytes += le.Uint64(rec[16:])
				f := le.Uint64(rec[24:])
				if f&AuxFlagTruncated != 0 {
					s.Truncated++
				}
				if f&AuxFlagPartial != 0 {
					s.Partial++
				}
				if f&AuxFlagCollision != 0 {
					s.Collision++
				}
				if f&AuxFlagOverwrite != 0 {
					s.Overwrite++
				}
			}
		case perfRecordLost:
			if size >= 24 {
				s.Lost += le.Uint64(rec[16:])
			}
		case perfRecordItraceStart:
			s.ItraceStarts++
		}
		b = b[size:]
	}
	if len(b) > 0 {
		s.BadRecords++
	}
}
