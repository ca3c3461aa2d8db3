package timeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
)

// ptChunk is how much of a raw PT stream is decoded at a time.
const ptChunk = 4 << 20

// ptSource draws an Intel PT packet stream on its TSC clock: at every TSC
// packet a counter of the trace bandwidth (bytes of packets since the
// previous TSC per second), and instants for overflows (OVF: the CPU lost
// trace data), trace stops and power events (PwrE, PwrX, MWAIT). Packets
// before the first TSC have no time: they are counted in NotTimed. Times
// have the granularity of TSC packets (MTC/CYC are not used).
type ptSource struct {
	closer   io.Closer
	warnings []string // found when opened
	br       io.Reader
	in       *InputStats

	buf  []byte
	base int64 // offset in the stream of buf[0]
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

// NewPTSource adapts a raw Intel PT packet stream (one CPU's or thread's,
// as 'iotap pt capture' writes cpuN.pt) to a timeline Source named name,
// decoded in chunks. conv converts its TSC to nanoseconds (nil: TSC ticks
// are shown as nanoseconds). Close closes r when it is an io.Closer.
func NewPTSource(name string, r io.Reader, conv *TSCConversion) Source {
	in := &InputStats{Path: name, Kind: KindPT, Clock: "TSC ticks (no conversion: shown as ns)"}
	if conv != nil {
		in.Clock = "TSC, converted"
	}
	s := newRawPTSource(r, in, conv)
	if c, ok := r.(io.Closer); ok {
		s.closer = c
	}
	return s
}

func newRawPTSource(r io.Reader, in *InputStats, conv *TSCConversion) *ptSource {
	in.Format = "raw Intel PT"
	s := &ptSource{br: r, in: in, conv: conv}
	s.buf = make([]byte, 0, ptChunk+64)
	s.dec = intelpt.NewDecoder(nil, intelpt.Config{})
	return s
}

// NewPerfDataSources adapts the Intel PT streams of a perf.data file (one
// source per CPU or thread stream) to timeline sources named name. conv
// converts the TSC to nanoseconds; nil takes the file's TIME_CONV record.
// perf's loss counters, for the whole file, are on the first source.
func NewPerfDataSources(name string, data []byte, conv *TSCConversion) ([]Source, error) {
	in := &InputStats{Path: name, Kind: KindPT, Clock: "TSC ticks (no conversion: shown as ns)"}
	if conv != nil {
		in.Clock = "TSC, converted"
	}
	return newPerfDataSources(data, in, conv)
}

func newPerfDataSources(b []byte, in *InputStats, conv *TSCConversion) ([]Source, error) {
	// A cut file (perf killed, disk full) gives what it holds; the cut is
	// loss (exit 3 unless --allow-loss).
	t, err := intelpt.PerfDataPTTruncated(b)
	if err != nil {
		return nil, err
	}
	return perfDataSources(t, in, conv)
}

// perfDataSources are the sources of the streams of t: held (PerfDataPT),
// or read from the file in chunks as raw streams are (OpenPerfDataPT).
func perfDataSources(t *intelpt.PerfTrace, in *InputStats, conv *TSCConversion) ([]Source, error) {
	in.Format = "perf.data (Intel PT)"
	if tc := t.TimeConv; conv == nil && tc != nil && tc.Mult <= math.MaxUint32 {
		conv = &TSCConversion{Zero: tc.Zero, Mult: uint32(tc.Mult), Shift: uint16(tc.Shift),
			Cycles: tc.Cycles, Mask: tc.Mask, Short: tc.UserTimeShort}
		in.Clock = "perf time (TSC converted with the file's TIME_CONV)"
	}
	if len(t.Streams) == 0 {
		return nil, fmt.Errorf("perf.data holds no Intel PT data")
	}
	var srcs []Source
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
		if ps.Data == nil {
			s.br, s.buf, s.eof = ps.Reader(), make([]byte, 0, ptChunk+64), false
		}
		srcs = append(srcs, s)
	}
	// perf's loss counters are for the whole file: on the first stream
	in.Lost += int64(t.Lost + t.AuxTruncated + t.AuxPartial + t.AuxCollision)
	if t.Truncated != "" {
		in.Truncated, in.Truncation = true, "perf.data "+t.Truncated
	}
	return srcs, nil
}

// openPT opens a raw PT stream (one source, decoded in chunks) or a
// perf.data (one source per CPU or thread stream, each read from the
// file in chunks; standard input or a pipe first copied to a temporary
// file). The
// TSC conversion comes from the clocks file, else from the perf.data
// file's TIME_CONV.
func openPT(f io.Closer, br *bufio.Reader, in *InputStats, opt *Options) ([]Source, error) {
	var conv *TSCConversion
	in.Clock = "TSC ticks (no conversion in the clocks file: shown as ns)"
	clk, ok := opt.Clocks.lookup(in.Path, KindPT)
	if ok && clk.TSC != nil {
		conv = clk.TSC
		in.Clock = "TSC, converted with the clocks file"
	}
	// A buffer of an 'iotap pt capture' directory: its capture.json has
	// the decoder's timing parameters and the TSC conversion of the
	// capture.
	capInfo, _, fromCapture := intelpt.CaptureInfoOf(in.Path)
	if fromCapture && conv == nil && capInfo.TSC != nil {
		conv = capInfo.TSC
		in.Clock = "perf time (TSC converted with the capture's capture.json)"
	}
	var srcs []Source
	head, _ := br.Peek(8)
	if !intelpt.IsPerfData(head) {
		s := newRawPTSource(br, in, conv)
		if fromCapture {
			s.dec = intelpt.NewDecoder(nil, capInfo.DecoderConfig())
		}
		s.closer = f
		srcs = []Source{s}
		if fromCapture && opt.PTCalls != nil {
			cs, err := captureCallsSources(in.Path, capInfo, conv, *opt.PTCalls)
			if err != nil {
				return nil, err
			}
			srcs = append(srcs, cs...)
		}
	} else if st, err := os.Stat(in.Path); in.Path != "-" && err == nil && st.Mode().IsRegular() {
		// A perf.data file: its streams are read from it as they are
		// decoded, never held.
		f.Close()
		pf, err := intelpt.OpenPerfDataFile(in.Path)
		if err != nil {
			return nil, err
		}
		in.BytesRead = st.Size() // the file, as a whole
		if srcs, err = perfDataSources(pf.PerfTrace, in, conv); err != nil {
			pf.Close()
			return nil, err
		}
		srcs[0].(*ptSource).closer = pf
		if opt.PTCalls != nil {
			cin, err := calls.ReadPerfDataFile(in.Path)
			if err != nil {
				return nil, err
			}
			if conv != nil {
				cin.ToNS = conv.ToNS
			}
			srcs = append(srcs, NewPTCallsSources(in.Path, cin, *opt.PTCalls)...)
		}
	} else {
		// Standard input or a pipe: copied to a temporary file, then read
		// from it as a perf.data file is, so that memory does not grow
		// with the input (it was read whole).
		sp, size, err := spoolPerfData(br)
		f.Close()
		if err != nil {
			return nil, err
		}
		t, err := intelpt.OpenPerfDataPT(sp, size)
		if err != nil {
			sp.Close()
			return nil, err
		}
		if srcs, err = perfDataSources(t, in, conv); err != nil {
			sp.Close()
			return nil, err
		}
		if opt.PTCalls == nil {
			srcs[0].(*ptSource).closer = sp
		} else {
			// the packet and call tracks read the copy: the last to
			// close it closes it
			sc := &sharedCloser{c: sp}
			pc, cc := sc.handle(), sc.handle()
			srcs[0].(*ptSource).closer = pc
			cin, err := calls.ReadPerfDataReaderAt(sp, size, cc)
			if err != nil {
				pc.Close()
				cc.Close()
				return nil, err
			}
			if conv != nil {
				cin.ToNS = conv.ToNS
			}
			srcs = append(srcs, NewPTCallsSources(in.Path, cin, *opt.PTCalls)...)
		}
	}
	if conv == nil && !strings.HasPrefix(in.Clock, "perf time") {
		srcs[0].(*ptSource).warnings = []string{"no TSC conversion in a clocks file: TSC ticks are shown as nanoseconds"}
	}
	return srcs, nil
}

func (s *ptSource) openWarnings() []string { return s.warnings }

func (s *ptSource) Info() *InputStats { return s.in }
func (s *ptSource) Close() error      { return closeIf(s.closer) }

// refill keeps the undecoded tail of the buffer and reads more.
func (s *ptSource) refill() error {
	if s.eof {
		return io.EOF
	}
	off := s.dec.Offset()
	s.base += off
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

// cutInPacket records that the stream ends inside the packet at the
// decoder's offset, with that packet's offset in the stream, as pt stats
// says it (intelpt.StatsLoss): "trace ends inside a packet at offset
// 0xOFF (last N bytes)".
func (s *ptSource) cutInPacket() {
	at := s.dec.Offset()
	s.in.Truncated = true
	s.in.Truncation = fmt.Sprintf("trace ends inside a packet at offset %#x (last %d bytes)", s.base+at, int64(len(s.buf))-at)
}

func (s *ptSource) time() int64 {
	return int64(s.conv.ToNS(s.tsc))
}

func (s *ptSource) Next() (int64, error) {
	for {
		err := s.dec.Next(&s.pkt)
		if err == io.EOF || errors.Is(err, intelpt.ErrTruncated) && !s.eof {
			if err := s.refill(); err != nil {
				if err == io.EOF {
					if len(s.buf) > int(s.dec.Offset()) {
						s.cutInPacket()
					}
					return 0, io.EOF
				}
				return 0, err
			}
			continue
		}
		if err != nil {
			if errors.Is(err, intelpt.ErrTruncated) {
				s.cutInPacket()
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

func (s *ptSource) Draw(c *Canvas, ts uint64) {
	switch s.cur {
	case intelpt.KindTSC:
		if s.counter == 0 {
			s.counter = c.W.Track(c.Top, "PT bandwidth", TrackOptions{Counter: true, Unit: UnitSizeBytes, UnitName: "B/s",
				Description: "bytes of PT packets per second between consecutive TSC packets"})
		}
		dt := int64(s.conv.ToNS(s.tsc)) - int64(s.conv.ToNS(s.prevTSC))
		if s.winBytes > 0 && dt > 0 {
			c.W.Counter(s.counter, ts, float64(s.winBytes)*1e9/float64(dt))
		}
	case intelpt.KindOVF:
		c.W.DataLost()
		c.W.Instant(c.Top, ts, "pt", "overflow", Str("meaning", "the CPU dropped trace packets"))
		c.Lost(ts, 1)
	case intelpt.KindTraceStop:
		c.W.Instant(c.Top, ts, "pt", "trace stop")
	case intelpt.KindPwrE:
		c.W.Instant(c.Top, ts, "pt", "power entry", Uint("cstate", uint64(s.pkt.Type)), Uint("substate", uint64(s.pkt.Sub)))
	case intelpt.KindPwrX:
		c.W.Instant(c.Top, ts, "pt", "power exit", Uint("last_cstate", uint64(s.pkt.Type)), Uint("deepest_cstate", uint64(s.pkt.Sub)))
	case intelpt.KindMWait:
		c.W.Instant(c.Top, ts, "pt", "mwait", Hex("hints", s.pkt.Payload), Hex("extensions", uint64(s.pkt.Aux)))
	}
}

func (s *ptSource) Flush(*Canvas, uint64)  {}
func (s *ptSource) Finish(*Canvas, uint64) {}

// captureCallsSources is the call track of the buffer path of an 'iotap
// pt capture' directory: the directory's sideband and mapped files (its
// binaries/ searched first), this buffer's stream.
func captureCallsSources(path string, ci *intelpt.CaptureInfo, conv *TSCConversion, o calls.Options) ([]Source, error) {
	dir := filepath.Dir(path)
	cin, err := calls.ReadCaptureDir(dir)
	if err != nil {
		return nil, err
	}
	if conv != nil {
		cin.ToNS = conv.ToNS
	}
	i := 0
	for i < len(ci.Buffers) && ci.Buffers[i].File != filepath.Base(path) {
		i++
	}
	if i >= len(cin.Streams) {
		cin.Close()
		return nil, fmt.Errorf("%s: not a buffer of %s", path, intelpt.CaptureInfoFile)
	}
	for j := range cin.Streams {
		if j != i {
			cin.Streams[j].Close() // only buffer i is decoded here
		}
	}
	cin.Streams = cin.Streams[i : i+1]
	// the one list of every command: the capture's binaries/ first
	o.Finder.BuildIDDirs = calls.BuildIDDirs([]string{filepath.Join(dir, intelpt.BinariesDir)}, o.Finder.BuildIDDirs)
	return NewPTCallsSources(path, cin, o), nil
}

// spoolPerfData copies the perf.data on r (standard input, a pipe) to a
// temporary file in os.TempDir, removed at once where the system allows
// it (it lives while open; elsewhere when closed), and returns it and its
// size: its streams are then read from it as they are decoded, as a
// perf.data file's are, so memory does not grow with the input; the copy
// costs the input's size on disk (or in memory if $TMPDIR is a tmpfs).
func spoolPerfData(r io.Reader) (*spoolFile, int64, error) {
	f, err := os.CreateTemp("", "iotap-timeline-*")
	if err != nil {
		return nil, 0, fmt.Errorf("a temporary copy of the perf.data: %w", err)
	}
	sp := &spoolFile{File: f}
	if os.Remove(f.Name()) != nil {
		sp.remove = true // Windows: not while open
	}
	n, err := io.Copy(f, r)
	if err != nil {
		sp.Close()
		return nil, 0, fmt.Errorf("a temporary copy of the perf.data (%d bytes written to %s): %w", n, os.TempDir(), err)
	}
	return sp, n, nil
}

// spoolFile is spoolPerfData's file: Close removes it if it could not be
// removed while open.
type spoolFile struct {
	*os.File
	remove bool
}

func (s *spoolFile) Close() error {
	err := s.File.Close()
	if s.remove {
		os.Remove(s.Name())
	}
	return err
}

// sharedCloser closes c when every handle made by handle is closed (each
// handle once; make them all before closing any).
type sharedCloser struct {
	c io.Closer
	n atomic.Int32
}

func (s *sharedCloser) handle() io.Closer {
	s.n.Add(1)
	return &sharedHandle{s: s}
}

type sharedHandle struct {
	s    *sharedCloser
	once sync.Once
}

func (h *sharedHandle) Close() error {
	var err error
	h.once.Do(func() {
		if h.s.n.Add(-1) == 0 {
			err = h.s.c.Close()
		}
	})
	return err
}
