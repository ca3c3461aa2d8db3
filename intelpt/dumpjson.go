package intelpt

import (
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/internal/ndjson"
)

// DecodeErrorKind names a packet decoding error as listings print it:
// "truncated", "unknown opcode" or "unknown packet"; ok is false for other
// errors (io.EOF included).
func DecodeErrorKind(err error) (kind string, ok bool) {
	switch {
	case errors.Is(err, ErrTruncated):
		return "truncated", true
	case errors.Is(err, ErrBadOpcode):
		return "unknown opcode", true
	case errors.Is(err, ErrBadPacket):
		return "unknown packet", true
	}
	return "", false
}

// DumpJSON writes the packets of data as NDJSON ('iotap pt dump --json',
// docs/ndjson.md): one pt_packet record per packet (Packet.AppendNDJSON),
// with the IP reconstructed (the last IP is reset at each PSB) and, on
// timing packets, the estimated TSC ("est_tsc", null before the first
// TSC). opt.StreamName and opt.StreamCPU name a perf.data stream on every
// record. Decoding starts at the first PSB unless opt.NoSync; opt.NoPad
// leaves PAD packets out. A decoding error is a pt_decode_error record
// followed by a resync at the next PSB; the returned error is only for
// write failures. The "input" record that starts the stream is the
// caller's (AppendInputNDJSON): one input may hold several streams.
func DumpJSON(w io.Writer, data []byte, cfg Config, opt DumpOptions) (DumpResult, error) {
	cfg = opt.errata(cfg)
	return dumpJSON(w, sliceSource{NewDecoder(data, cfg)}, cfg, opt)
}

// errata returns cfg with the errata of opt.CPU (ptdump's --cpu), as Dump
// applies them (an unknown CPU: none).
func (opt *DumpOptions) errata(cfg Config) Config {
	if opt.CPU != nil {
		cfg.Errata, _ = ErrataFor(*opt.CPU)
	}
	return cfg
}

// DumpJSONReader is DumpJSON over a stream, as DumpReader is Dump: the
// trace is read through a window of window bytes (0: 1 MiB), so memory
// does not grow with its size. The output is DumpJSON's on the same bytes
// (TestDumpJSONReaderMatchesDumpJSON, FuzzDumpNDJSON). A read error ends
// the listing and is returned after what was decoded is written.
func DumpJSONReader(w io.Writer, r io.Reader, window int, cfg Config, opt DumpOptions) (DumpResult, error) {
	cfg = opt.errata(cfg)
	var s *StreamDecoder
	if window > 0 && window < 4096 {
		s = newStreamDecoder(r, cfg, window)
	} else {
		s = NewStreamDecoder(r, cfg, window)
	}
	res, err := dumpJSON(w, streamSource{s}, cfg, opt)
	if err == nil {
		err = s.Err()
	}
	return res, err
}

// dumpJSON is DumpJSON and DumpJSONReader.
func dumpJSON(w io.Writer, d packetSource, cfg Config, opt DumpOptions) (DumpResult, error) {
	var res DumpResult
	nw := ndjson.NewWriter(w)
	if opt.NoSync {
		d.start()
	} else if d.SyncForward() != nil {
		res.SkippedTail, res.Skipped = d.end(), d.end()
		return res, nw.Flush()
	}
	res.Skipped = d.Offset()
	var p Packet
	var last LastIP
	x := PacketJSON{Stream: opt.StreamName, CPU: opt.StreamCPU, Last: &last}
	tt := NewTimeTracker(cfg)
	for {
		off := d.Offset()
		err := d.Next(&p)
		if err != nil {
			if perr, ok := DecodeErrorKind(err); ok {
				if perr == "truncated" {
					res.Truncated, res.SkippedTail = true, d.end()-off
					res.Skipped += res.SkippedTail
					break
				}
				res.error(off)
				nw.B = AppendDecodeErrorNDJSON(nw.B, x.Stream, x.CPU, off, perr)
				if err := nw.Flushed(); err != nil {
					return res, err
				}
				if d.SyncForward() != nil {
					res.Skipped += d.end() - off
					break
				}
				res.Skipped += max(d.Offset()-off, 0)
				last = LastIP{}
				tt.Reset()
				continue
			}
			break // io.EOF
		}
		res.Packets++
		switch p.Kind {
		case KindOVF:
			res.Overflows++
		case KindPSB:
			last = LastIP{}
		case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
			last.Update(p.IPC, p.Payload)
		case KindPad:
			if opt.NoPad {
				continue
			}
		}
		x.Timed = tt.Update(&p)
		if x.Timed {
			x.EstTSC, x.HaveTSC = tt.TSC()
		}
		nw.B = p.AppendNDJSON(nw.B, off, &x)
		if err := nw.Flushed(); err != nil {
			return res, err
		}
	}
	return res, nw.Flush()
}

// Name is "cpu N", or "tid N" for a stream recorded per thread.
func (s *PerfStream) Name() string {
	if s.CPU < 0 {
		return fmt.Sprintf("tid %d", s.TID)
	}
	return fmt.Sprintf("cpu %d", s.CPU)
}

// LossSummary says what perf recorded lost ("perf recorded loss: ..."),
// or "" when it recorded no loss.
func (t *PerfTrace) LossSummary() string {
	if t == nil || !t.Lossy() {
		return ""
	}
	if t.AuxTruncated+t.AuxPartial+t.AuxCollision+t.Lost+t.LostSamples+t.AuxtraceErrors == 0 {
		return "perf.data truncated: " + t.Truncated
	}
	l := fmt.Sprintf("perf recorded loss: %d truncated AUX, %d partial AUX, %d AUX collisions, %d lost records, %d lost samples, %d AUXTRACE errors",
		t.AuxTruncated, t.AuxPartial, t.AuxCollision, t.Lost, t.LostSamples, t.AuxtraceErrors)
	if t.Truncated != "" {
		l += "; perf.data truncated: " + t.Truncated
	}
	return l
}
