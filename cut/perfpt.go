package cut

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/perfdata"
)

// perf.data record types and the feature the cut rewrites.
const (
	perfRecordAuxtrace = 71
	perfRecordAuxInfo  = 70 // AUXTRACE_INFO
	perfFeatAuxtrace   = 18 // HEADER_AUXTRACE: the file offsets of the AUXTRACE records
	perfAuxtraceSize   = 48 // an AUXTRACE record without its data
)

// CutPerfDataPT cuts the Intel PT of a perf.data file (perf record -e
// intel_pt//, file mode) to the window spec and writes a perf.data file:
// the header, attributes and every record but AUXTRACE as they are (the
// sideband: mmaps, comms, switches, TIME_CONV, AUXTRACE_INFO, AUX and loss
// records), and, for each PT stream (per CPU, or per thread), the AUXTRACE
// records holding its whole PSB segments that the window touches, as the
// raw cut does (see Cut), shortened where the cut begins and ends inside
// one: the stream's data in the new file is byte for byte the raw cut of
// the stream (EmptyPT, in one AUXTRACE record, when no packet of the
// stream is in the window). The feature sections follow, but for
// HEADER_AUXTRACE (its offsets index the input), which is left out: perf
// then queues the AUXTRACE records as it reads them.
//
// Times are perf time (the TSC converted with the file's TIME_CONV; TSC
// ticks when it has none), relative ends count from the earliest timed
// packet of any stream. PT has no markers (mark: is an error). Result
// counts the packets kept (Events) and the overflows in them (Lost), over
// all streams.
func CutPerfDataPT(ctx context.Context, b []byte, spec timerange.Spec, w io.Writer) (*Result, error) {
	res := &Result{Format: FormatPerfPT}
	if len(spec.Marks()) > 0 {
		return res, &WindowError{errors.New("cut: an Intel PT trace has no markers (mark:NAME)")}
	}
	f, err := perfdata.OpenBytes(b)
	if err != nil {
		return res, err
	}
	switch {
	case f.Pipe:
		return res, errors.New("cut: a perf.data in pipe mode (perf record -o -) is not cut: write it to a file ('perf inject -i - -o FILE')")
	case f.Truncated != "":
		return res, fmt.Errorf("cut: perf.data: %s", f.Truncated)
	}
	tr, err := intelpt.PerfDataPT(b)
	if err != nil {
		return res, err
	}
	if len(tr.Streams) == 0 {
		return res, errors.New("cut: perf.data holds no Intel PT data (no AUXTRACE records)")
	}
	timing := &PTTiming{Config: tr.Config}
	if tr.TimeConv != nil {
		timing.ToNS = tr.TimeConv.ToNS
	}
	// the clock: the earliest timed packet of any stream
	clock := timerange.Clock{}
	for _, s := range tr.Streams {
		sp, err := scanPT(ctx, bytes.NewReader(s.Data), timing, timerange.Window{}, true)
		if err != nil {
			return res, err
		}
		if sp.hasFirst && (!clock.HasStart || sp.first < clock.Start) {
			clock.Start, clock.HasStart = sp.first, true
		}
	}
	res.Start, res.HasStart = clock.Start, clock.HasStart
	win, err := spec.Resolve(clock)
	if err != nil {
		return res, &WindowError{err}
	}
	res.Window = win
	type key struct{ cpu, tid int32 }
	ranges := map[key][2]int64{}
	for _, s := range tr.Streams {
		sp, err := scanPT(ctx, bytes.NewReader(s.Data), timing, win, false)
		if err != nil {
			return res, err
		}
		end := sp.end
		if end < 0 {
			end = int64(len(s.Data))
		}
		rg := [2]int64{sp.start, end}
		if end <= sp.start {
			rg = [2]int64{-1, -1} // no packet in the window: PSB, PSBEND
		}
		ranges[key{s.CPU, s.TID}] = rg
		res.Events += sp.kept
		res.Lost += sp.ovf
	}

	le := binary.LittleEndian
	dOff := f.Data.Offset
	hdr := bytes.Clone(b[:dOff]) // header, attributes, their ids
	var data bytes.Buffer
	pos := map[key]int64{}
	rd := f.Records()
	defer rd.Close()
	for {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
		if r.Inflated {
			return res, errors.New("cut: a compressed perf.data (perf record -z) is not cut: 'perf inject' can write it uncompressed")
		}
		if r.Type != perfRecordAuxtrace {
			data.Write(r.Data)
			continue
		}
		if len(r.Data) < perfAuxtraceSize {
			return res, fmt.Errorf("cut: perf.data offset %#x: short AUXTRACE record", r.Offset)
		}
		k := key{int32(le.Uint32(r.Data[40:])), int32(le.Uint32(r.Data[36:]))}
		if k.cpu != -1 {
			k.tid = -1 // per CPU: one stream whatever the thread (as intelpt.PerfDataPT)
		}
		p, n := pos[k], r.PayloadSize
		pos[k] = p + n
		rg := ranges[k]
		var payload []byte
		off := le.Uint64(r.Data[16:])
		switch {
		case rg[0] < 0 && p == 0:
			payload, off = EmptyPT, 0 // the stream's first record: an empty stream
		case rg[0] < 0:
		default:
			if lo, hi := max(p, rg[0]), min(p+n, rg[1]); lo < hi {
				payload = b[r.PayloadOffset+lo-p : r.PayloadOffset+hi-p]
				off += uint64(lo - p)
			}
		}
		if payload == nil {
			continue
		}
		rec := bytes.Clone(r.Data[:perfAuxtraceSize])
		le.PutUint64(rec[8:], uint64(len(payload)))
		le.PutUint64(rec[16:], off)
		data.Write(rec)
		data.Write(payload)
	}
	// the feature sections, HEADER_AUXTRACE left out
	var bits []int
	for bit := range f.Sections {
		if bit != perfFeatAuxtrace {
			bits = append(bits, bit)
		}
	}
	sort.Ints(bits)
	var feats [4]uint64
	for _, bit := range bits {
		feats[bit/64] |= 1 << (bit % 64)
	}
	dEnd := dOff + int64(data.Len())
	table := make([]byte, 0, 16*len(bits))
	var secs bytes.Buffer
	at := dEnd + int64(16*len(bits))
	for _, bit := range bits {
		s := f.Sections[bit]
		table = le.AppendUint64(table, uint64(at+int64(secs.Len())))
		table = le.AppendUint64(table, uint64(s.Size))
		secs.Write(b[s.Offset : s.Offset+s.Size])
	}
	le.PutUint64(hdr[48:], uint64(data.Len()))
	for i, v := range feats {
		le.PutUint64(hdr[72+8*i:], v)
	}
	for _, part := range [][]byte{hdr, data.Bytes(), table, secs.Bytes()} {
		if _, err := w.Write(part); err != nil {
			return res, err
		}
	}
	res.BytesRead = int64(len(b))
	return res, nil
}
