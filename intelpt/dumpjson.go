package intelpt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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

// DumpJSON writes the packets of data as NDJSON ('iotap pt dump --json'):
// one [Packet.AppendJSON] object per packet, with the IP reconstructed
// (the last IP is reset at each PSB) and, on timing packets after the
// first TSC, the estimated TSC ("est_tsc"). Decoding starts at the first
// PSB unless opt.NoSync; opt.NoPad leaves PAD packets out. A decoding error
// is an object {"offset", "error"} followed by a resync at the next PSB;
// the returned error is only for write failures.
func DumpJSON(w io.Writer, data []byte, cfg Config, opt DumpOptions) (DumpResult, error) {
	var res DumpResult
	bw := bufio.NewWriterSize(w, 64<<10)
	d := NewDecoder(data, cfg)
	if opt.NoSync {
		d.SetOffset(0)
	} else if d.SyncForward() != nil {
		res.SkippedTail = int64(len(data))
		return res, bw.Flush()
	}
	var p Packet
	var last LastIP
	var line []byte
	tt := NewTimeTracker(cfg)
	for {
		off := d.Offset()
		err := d.Next(&p)
		if err != nil {
			if perr, ok := DecodeErrorKind(err); ok {
				if perr == "truncated" {
					res.Truncated, res.SkippedTail = true, int64(len(data))-off
					break
				}
				res.Errors++
				line = fmt.Appendf(line[:0], "{\"offset\":%d,\"error\":%q}\n", off, perr)
				bw.Write(line)
				if d.SyncForward() != nil {
					break
				}
				last = LastIP{}
				tt.Reset()
				continue
			}
			break // io.EOF
		}
		res.Packets++
		switch p.Kind {
		case KindPSB:
			last = LastIP{}
		case KindTIP, KindTIPPGE, KindTIPPGD, KindFUP:
			last.Update(p.IPC, p.Payload)
		case KindPad:
			if opt.NoPad {
				continue
			}
		}
		timed := tt.Update(&p)
		line = p.AppendJSON(line[:0], off, &last)
		if tsc, ok := tt.TSC(); timed && ok && p.Kind != KindTSC {
			line = fmt.Appendf(line[:len(line)-1], ",\"est_tsc\":%d}", tsc)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return res, err
		}
	}
	return res, bw.Flush()
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
