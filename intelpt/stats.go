package intelpt

import (
	"encoding/binary"
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
	// Truncated: the trace ends inside a packet, the one at offset
	// TruncatedAt (0 when a read error cut the trace instead).
	Truncated   bool
	TruncatedAt int64
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

// buildStatsExtOps builds statsExtOps (tables_gen.go), which gives the kind and size of the extended packets (opcode
// 0x02, by their second byte) that computeStatsSeg counts without
// decoding: those of fixed size that neither change the decoder's state
// nor can be bad, except TNT-64 (bad without bits: checked).
func buildStatsExtOps() (t [256]fastOp) {
	t[extTNT64] = fastOp{kind: KindTNT64, size: 8}
	t[extPIP] = fastOp{kind: KindPIP, size: 8}
	t[extPSBE] = fastOp{kind: KindPSBEnd, size: 2, timing: true}
	t[extStop] = fastOp{kind: KindTraceStop, size: 2}
	t[extExSt] = fastOp{kind: KindExStop, size: 2}
	t[extExStI] = fastOp{kind: KindExStop, size: 2}
	for _, e := range []byte{0x12, 0x92} { // PTW, 4-byte payload
		t[e] = fastOp{kind: KindPTW, size: 6}
	}
	for _, e := range []byte{0x32, 0xb2} { // PTW, 8-byte payload
		t[e] = fastOp{kind: KindPTW, size: 10}
	}
	return t
}

// tscOp is the TSC packet for computeStatsSeg (its payload is read apart).
var tscOp = fastOp{kind: KindTSC, size: 8, timing: true}

// maxErrorOffsets caps Stats.ErrorOffsets.
const maxErrorOffsets = 100

// ComputeStats decodes buf from its first PSB and summarises it.
func ComputeStats(buf []byte, cfg Config) Stats {
	s, _ := computeStatsSeg(streamOver(buf, cfg), nil)
	return s
}

// ComputeStatsReader is ComputeStats over a stream, in constant memory.
func ComputeStatsReader(r io.Reader, cfg Config) (Stats, error) {
	d := NewStreamDecoder(r, cfg, 0)
	s, _ := computeStatsSeg(d, nil)
	return s, d.Err()
}

// statsSeg is what merging segment statistics needs beyond Stats.
type statsSeg struct {
	firstPSB, lastPSB int64 // offsets, -1: none
	gapSum            int64
}

// computeStatsSeg decodes d and summarises it. With rec set, the packets
// the time tracker reads (and its resets) are appended to rec instead of
// being tracked, for a later replay in stream order (ComputeStatsFile).
// The statistics are taken on a StreamDecoder (not an interface over it
// and Decoder: calls through one cost a tenth of 'pt stats').
func computeStatsSeg(d *StreamDecoder, rec *timingLog) (Stats, statsSeg) {
	size := d.end
	var s Stats
	seg := statsSeg{firstPSB: -1, lastPSB: -1}
	if d.SyncForward() != nil {
		s.SkippedBytes = size()
		s.Bytes = size()
		return s, seg
	}
	s.SkippedBytes = d.Offset()
	var p Packet
	tm := NewTimeTracker(d.d.cfg)
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
		// The frequent packets are counted straight from the window,
		// without a Packet or a call per packet: those of Decoder.Next's
		// table (TNT-8, PAD, short CYC, MTC, the TIP/FUP family), the
		// fixed-size extended ones of statsExtOps (TNT-64, PIP, PTW,
		// EXSTOP, STOP, PSBEND), MODE and TSC. The timing ones among them
		// (CYC, MTC, TSC, PSBEND) go to the tracker. The loop stops where
		// StreamDecoder.Next would refill or Decoder.Next would leave its
		// table, and at any other packet (or one that may be bad: a
		// TNT-64 without bits, a MODE of another leaf, a packet running
		// past the end), which takes the path below: the counts are those
		// of a Next loop (TestStatsFastMatchesNext,
		// FuzzStatsFastMatchesNext).
		if dd := &d.d; dd.block == 0 {
			buf, pos := dd.buf, dd.pos
			limit := len(buf) - maxPacket
			if d.eof {
				limit = len(buf) - 8
			}
		fast:
			for pos < limit {
				b := buf[pos]
				e := &fastOps[b]
				if e.size == 0 {
					switch b {
					case opcExt:
						e = &statsExtOps[buf[pos+1]]
						if e.size == 0 || pos+int(e.size) > len(buf) ||
							e.kind == KindTNT64 && binary.LittleEndian.Uint64(buf[pos:])>>16 == 0 {
							break fast
						}
					case opcMode:
						switch buf[pos+1] & 0xe0 {
						case 0x00:
							s.ByKind[KindModeExec]++
						case 0x20:
							s.ByKind[KindModeTSX]++
						default:
							break fast
						}
						pos += 2
						continue
					case opcTSC:
						e = &tscOp
					default:
						break fast
					}
				}
				s.ByKind[e.kind]++
				if e.timing {
					v := e.payload | uint64(buf[pos+1])&e.mask
					if e.kind == KindTSC {
						v = binary.LittleEndian.Uint64(buf[pos:]) >> 8
					}
					switch {
					case rec != nil:
						p = Packet{Kind: e.kind, Size: e.size, Payload: v}
						rec.add(&p)
					case e.kind == KindCYC && !tm.cal.haveFCR():
						// TimeTracker.Update of a CYC before calibration:
						// cycles counted, the CYC lost for the estimate.
						tm.cal.cycMTC += v
						tm.cal.cycTSC += v
						tm.t.lostCyc++
					default:
						p = Packet{Kind: e.kind, Size: e.size, Payload: v}
						if tm.Update(&p) {
							note()
						}
					}
				}
				pos += int(e.size)
			}
			dd.pos = pos
		}
		off := d.Offset()
		err := d.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, ErrTruncated) {
				s.Truncated, s.TruncatedAt = true, off
				s.SkippedBytes += size() - off
				break
			}
			s.Errors++
			if len(s.ErrorOffsets) < maxErrorOffsets {
				s.ErrorOffsets = append(s.ErrorOffsets, off)
			}
			if d.SyncForward() != nil {
				s.SkippedBytes += size() - off
				if rec != nil {
					rec.reset()
				}
				break
			}
			s.SkippedBytes += max(d.Offset()-off, 0)
			if rec != nil {
				rec.reset()
			} else {
				tm.Reset()
			}
			continue
		}
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
			} else {
				seg.firstPSB = off
			}
			lastPSB = off
			s.PSBs++
		case KindOVF:
			s.Overflows++
		}
		if rec != nil {
			if timingKind[p.Kind] {
				rec.add(&p)
			}
		} else if tm.Update(&p) {
			note()
		}
	}
	if s.PSBs > 1 {
		s.PSBGapMean = gapSum / (s.PSBs - 1)
	}
	for _, n := range s.ByKind {
		s.Packets += n
	}
	s.Bytes = size()
	seg.lastPSB, seg.gapSum = lastPSB, gapSum
	return s, seg
}
