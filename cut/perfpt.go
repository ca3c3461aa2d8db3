package cut

import (
	"bufio"
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
	return CutPerfDataPTReaderAt(ctx, bytes.NewReader(b), int64(len(b)), spec, w)
}

// CutPerfDataPTReaderAt is CutPerfDataPT of the perf.data that ra holds
// (size bytes), read as it is cut: the PT streams are read from ra as
// they are scanned (intelpt.OpenPerfDataPT), the records are walked
// twice (once for the size of the new data section, which the header
// gives first, once to write them) and each kept AUXTRACE record's data
// is copied from ra, so that memory does not grow with the file.
func CutPerfDataPTReaderAt(ctx context.Context, ra io.ReaderAt, size int64, spec timerange.Spec, w io.Writer) (*Result, error) {
	res := &Result{Format: FormatPerfPT}
	if len(spec.Marks()) > 0 {
		return res, &WindowError{Err: errPTNoMarkers}
	}
	f, err := perfdata.Open(ra, size)
	if err != nil {
		return res, err
	}
	switch {
	case f.Pipe:
		return res, errors.New("cut: a perf.data in pipe mode (perf record -o -) is not cut: write it to a file ('perf inject -i - -o FILE')")
	case f.Truncated != "":
		return res, fmt.Errorf("cut: perf.data: %s", f.Truncated)
	}
	tr, err := intelpt.OpenPerfDataPTComplete(ra, size)
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
	for i := range tr.Streams {
		sp, err := scanPT(ctx, tr.Streams[i].Reader(), timing, timerange.Window{}, true)
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
		return res, &WindowError{Err: err}
	}
	res.Window = win
	ranges := map[perfKey][2]int64{}
	for i := range tr.Streams {
		s := &tr.Streams[i]
		sp, err := scanPT(ctx, s.Reader(), timing, win, false)
		if err != nil {
			return res, err
		}
		end := sp.end
		if end < 0 {
			end = s.Len()
		}
		rg := [2]int64{sp.start, end}
		if end <= sp.start {
			rg = [2]int64{-1, -1} // no packet in the window: PSB, PSBEND
		}
		ranges[perfKey{s.CPU, s.TID}] = rg
		res.Events += sp.kept
		res.Lost += sp.ovf
	}

	// The records, walked once for the data section's size, then again
	// to write them.
	le := binary.LittleEndian
	dOff := f.Data.Offset
	var dataLen int64
	if err := cutRecords(ctx, f, ranges, func(rec []byte, from, n int64, payload []byte) error {
		dataLen += int64(len(rec)) + n + int64(len(payload))
		return nil
	}); err != nil {
		return res, err
	}
	hdr := make([]byte, dOff) // header, attributes, their ids
	if _, err := ra.ReadAt(hdr, 0); err != nil {
		return res, fmt.Errorf("cut: perf.data header: %w", err)
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
	dEnd := dOff + dataLen
	table := make([]byte, 0, 16*len(bits))
	at := dEnd + int64(16*len(bits))
	var secsLen int64
	for _, bit := range bits {
		s := f.Sections[bit]
		table = le.AppendUint64(table, uint64(at+secsLen))
		table = le.AppendUint64(table, uint64(s.Size))
		secsLen += s.Size
	}
	le.PutUint64(hdr[48:], uint64(dataLen))
	for i, v := range feats {
		le.PutUint64(hdr[72+8*i:], v)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(hdr)
	var written int64
	err = cutRecords(ctx, f, ranges, func(rec []byte, from, n int64, payload []byte) error {
		bw.Write(rec)
		bw.Write(payload)
		written += int64(len(rec)) + n + int64(len(payload))
		if n > 0 {
			if _, err := io.Copy(bw, io.NewSectionReader(ra, from, n)); err != nil {
				return fmt.Errorf("cut: perf.data offset %#x: %w", from, err)
			}
		}
		return nil
	})
	if err == nil && written != dataLen {
		err = fmt.Errorf("cut: perf.data changed while it was cut (%d bytes of records, then %d)", dataLen, written)
	}
	if err != nil {
		return res, err
	}
	bw.Write(table)
	for _, bit := range bits {
		s := f.Sections[bit]
		if _, err := io.Copy(bw, io.NewSectionReader(ra, s.Offset, s.Size)); err != nil {
			return res, fmt.Errorf("cut: perf.data feature %d: %w", bit, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return res, err
	}
	res.BytesRead = size
	return res, nil
}

// perfKey is a PT stream of a perf.data: its CPU and, per thread, its
// thread (-1 per CPU, as intelpt.PerfDataPT keys them).
type perfKey struct{ cpu, tid int32 }

// cutRecords walks the records of f and gives emit what the cut keeps of
// each: a record as it is (rec, n 0); an AUXTRACE record of a stream
// whose data the window touches, rewritten (rec), with n bytes of its
// data from file offset from, or with payload (EmptyPT: the stream's
// first record when none of its packets is in the window).
func cutRecords(ctx context.Context, f *perfdata.File, ranges map[perfKey][2]int64, emit func(rec []byte, from, n int64, payload []byte) error) error {
	le := binary.LittleEndian
	pos := map[perfKey]int64{}
	rd := f.Records()
	defer rd.Close()
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if r.Inflated {
			return errors.New("cut: a compressed perf.data (perf record -z) is not cut: 'perf inject' can write it uncompressed")
		}
		if r.Type != perfRecordAuxtrace {
			if err := emit(r.Data, 0, 0, nil); err != nil {
				return err
			}
			continue
		}
		if len(r.Data) < perfAuxtraceSize {
			return fmt.Errorf("cut: perf.data offset %#x: short AUXTRACE record", r.Offset)
		}
		k := perfKey{int32(le.Uint32(r.Data[40:])), int32(le.Uint32(r.Data[36:]))}
		if k.cpu != -1 {
			k.tid = -1 // per CPU: one stream whatever the thread (as intelpt.PerfDataPT)
		}
		p, n := pos[k], r.PayloadSize
		pos[k] = p + n
		rg := ranges[k]
		var payload []byte
		var from, keep int64
		off := le.Uint64(r.Data[16:])
		switch {
		case rg[0] < 0 && p == 0:
			payload, off = EmptyPT, 0 // the stream's first record: an empty stream
		case rg[0] < 0:
		default:
			if lo, hi := max(p, rg[0]), min(p+n, rg[1]); lo < hi {
				from, keep = r.PayloadOffset+lo-p, hi-lo
				off += uint64(lo - p)
			}
		}
		if payload == nil && keep == 0 {
			continue
		}
		rec := bytes.Clone(r.Data[:perfAuxtraceSize])
		le.PutUint64(rec[8:], uint64(len(payload))+uint64(keep))
		le.PutUint64(rec[16:], off)
		if err := emit(rec, from, keep, payload); err != nil {
			return err
		}
	}
}
