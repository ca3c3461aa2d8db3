package timeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/iotap/iotap/intelpt"
)

// ptChunk is how much of a raw PT stream is decoded at a time.
const ptChunk = 4 << 20

// maxPerfData bounds the perf.data files read (they are read whole).
const maxPerfData = 1 << 30

// ptSource draws an Intel PT packet stream on its TSC clock: at every TSC
// packet a counter of the trace bandwidth (bytes of packets since the
// previous TSC per second), and instants for overflows (OVF: the CPU lost
// trace data), trace stops and power events (PwrE, PwrX, MWAIT). Packets
// before the first TSC have no time: they are counted in NotTimed. Times
// have the granularity of TSC packets (MTC/CYC are not used).
type ptSource struct {
	f   *os.File
	br  io.Reader
	in  *InputStats
	top uint64

	buf  []byte
	dec  *intelpt.Decoder
	eof  bool
	pkt  intelpt.Packet
	conv *TSCConversion

	haveTSC  bool
	tsc      uint64
	prevTSC  uint64
	bytes    int64 // packet bytes since the previous TSC
	winBytes int64 // bytes of the window that ends at the current TSC
	cur      intelpt.Kind
	counter  uint64
}

// newPTSources opens a raw PT stream (one source, decoded in chunks) or a
// perf.data file (read whole; one source per CPU or thread stream).
func newPTSources(f *os.File, br *bufio.Reader, in *InputStats, clocks *Clocks) ([]source, error) {
	var conv *TSCConversion
	in.Clock = "TSC ticks (no conversion in the clocks file: shown as ns)"
	if clk, ok := clocks.lookup(in.Path, KindPT); ok && clk.TSC != nil {
		conv = clk.TSC
		in.Clock = "TSC, converted with the clocks file"
	}
	head, _ := br.Peek(8)
	if !intelpt.IsPerfData(head) {
		in.Format = "raw Intel PT"
		s := &ptSource{f: f, br: br, in: in, conv: conv}
		s.buf = make([]byte, 0, ptChunk+64)
		s.dec = intelpt.NewDecoder(nil, intelpt.Config{})
		return []source{s}, nil
	}
	in.Format = "perf.data (Intel PT)"
	b, err := io.ReadAll(io.LimitReader(br, maxPerfData+1))
	f.Close()
	if err != nil {
		return nil, err
	}
	if len(b) > maxPerfData {
		return nil, fmt.Errorf("perf.data larger than %d bytes: extract the PT streams first", maxPerfData)
	}
	t, err := intelpt.PerfDataPT(b)
	if err != nil {
		return nil, err
	}
	if tc := t.TimeConv; conv == nil && tc != nil && tc.Mult <= math.MaxUint32 {
		conv = &TSCConversion{Zero: tc.Zero, Mult: uint32(tc.Mult), Shift: uint16(tc.Shift),
			Cycles: tc.Cycles, Mask: tc.Mask, Short: tc.UserTimeShort}
		in.Clock = "perf time (TSC converted with the file's TIME_CONV)"
	}
	if len(t.Streams) == 0 {
		return nil, fmt.Errorf("perf.data holds no Intel PT data")
	}
	var srcs []source
	for i, ps := range t.Streams {
		sin := in
		if i > 0 {
			c := *in
			sin = &c
		}
		if ps.CPU >= 0 {
			sin.Stream = fmt.Sprintf("cpu %d", ps.CPU)
		} else {
			sin.Stream = fmt.Sprintf("tid %d", ps.TID)
		}
		s := &ptSource{in: sin, conv: conv, buf: ps.Data, eof: true, dec: intelpt.NewDecoder(ps.Data, t.Config)}
		srcs = append(srcs, s)
	}
	// perf's loss counters are for the whole file: on the first stream
	in.Lost += int64(t.Lost + t.AuxTruncated + t.AuxPartial + t.AuxCollision)
	return srcs, nil
}

func (s *ptSource) setTop(t uint64)    { s.top = t }
func (s *ptSource) stats() *InputStats { return s.in }
func (s *ptSource) close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// refill keeps the undecoded tail of the buffer and reads more.
func (s *ptSource) refill() error {
	if s.eof {
		return io.EOF
	}
	off := s.dec.Offset()
	rest := copy(s.buf[:cap(s.buf)], s.buf[off:])
	n, err := io.ReadFull(s.br, s.buf[rest:cap(s.buf)])
	s.buf = s.buf[:rest+n]
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		s.eof = true
	} else if err != nil {
		return err
	}
	s.dec.Reset(s.buf)
	return nil
}

func (s *ptSource) time() int64 {
	return int64(s.conv.ToNS(s.tsc))
}

func (s *ptSource) next() (int64, error) {
	for {
		err := s.dec.Next(&s.pkt)
		if err == io.EOF || errors.Is(err, intelpt.ErrTruncated) && !s.eof {
			if err := s.refill(); err != nil {
				if err == io.EOF {
					if len(s.buf) > int(s.dec.Offset()) {
						s.in.Truncated = true
					}
					return 0, io.EOF
				}
				return 0, err
			}
			continue
		}
		if err != nil {
			if errors.Is(err, intelpt.ErrTruncated) {
				s.in.Truncated = true
				return 0, io.EOF
			}
			s.in.Skipped++
			if serr := s.dec.SyncForward(); serr != nil {
				// no PSB in what is buffered: drop it but for a PSB's
				// worth that may continue in the next chunk
				if s.eof {
					return 0, io.EOF
				}
				keep := int64(len(s.buf)) - 16
				if keep > s.dec.Offset() {
					_ = s.dec.SetOffset(keep)
				}
				if err := s.refill(); err != nil && err != io.EOF {
					return 0, err
				}
			}
			continue
		}
		s.bytes += int64(s.pkt.Size)
		switch s.pkt.Kind {
		case intelpt.KindTSC:
			s.prevTSC, s.tsc = s.tsc, s.pkt.Payload
			first := !s.haveTSC
			s.haveTSC = true
			s.winBytes, s.bytes = s.bytes, 0
			s.cur = intelpt.KindTSC
			if first {
				s.winBytes = 0
			}
			return s.time(), nil
		case intelpt.KindOVF, intelpt.KindTraceStop, intelpt.KindPwrE, intelpt.KindPwrX, intelpt.KindMWait:
			if s.pkt.Kind == intelpt.KindOVF {
				s.in.Dropped++
			}
			if !s.haveTSC {
				s.in.NotTimed++
				continue
			}
			s.cur = s.pkt.Kind
			return s.time(), nil
		}
	}
}

func (s *ptSource) emit(x *exporter, ts uint64) {
	switch s.cur {
	case intelpt.KindTSC:
		if s.counter == 0 {
			s.counter = x.w.Track(s.top, "PT bandwidth", TrackOptions{Counter: true, Unit: UnitSizeBytes, UnitName: "B/s",
				Description: "bytes of PT packets per second between consecutive TSC packets"})
		}
		dt := int64(s.conv.ToNS(s.tsc)) - int64(s.conv.ToNS(s.prevTSC))
		if s.winBytes > 0 && dt > 0 {
			x.w.Counter(s.counter, ts, float64(s.winBytes)*1e9/float64(dt))
		}
	case intelpt.KindOVF:
		x.w.DataLost()
		x.w.Instant(s.top, ts, "pt", "overflow", Str("meaning", "the CPU dropped trace packets"))
	case intelpt.KindTraceStop:
		x.w.Instant(s.top, ts, "pt", "trace stop")
	case intelpt.KindPwrE:
		x.w.Instant(s.top, ts, "pt", "power entry", Uint("cstate", uint64(s.pkt.Type)), Uint("substate", uint64(s.pkt.Sub)))
	case intelpt.KindPwrX:
		x.w.Instant(s.top, ts, "pt", "power exit", Uint("last_cstate", uint64(s.pkt.Type)), Uint("deepest_cstate", uint64(s.pkt.Sub)))
	case intelpt.KindMWait:
		x.w.Instant(s.top, ts, "pt", "mwait", Hex("hints", s.pkt.Payload), Hex("extensions", uint64(s.pkt.Aux)))
	}
}

func (s *ptSource) flush(*exporter, uint64)  {}
func (s *ptSource) finish(*exporter, uint64) {}
