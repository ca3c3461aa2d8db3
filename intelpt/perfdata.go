package intelpt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"

	"github.com/iotap/iotap/perfdata"
)

// perf.data support: extract the PT data (PERF_RECORD_AUXTRACE) that
// `perf record -e intel_pt//` stores, per CPU, with the recording parameters
// from PERF_RECORD_AUXTRACE_INFO.

// PerfMagic starts every perf.data file (file and pipe mode).
var PerfMagic = perfdata.Magic

// IsPerfData reports whether b starts like a perf.data file.
func IsPerfData(b []byte) bool { return perfdata.Is(b) }

// ErrPerfData wraps errors in perf.data input.
var ErrPerfData = errors.New("bad perf.data")

// Record types (include/uapi/linux/perf_event.h, tools/lib/perf).
const (
	perfRecordLost         = 2
	perfRecordAux          = 11
	perfRecordItraceStart  = 12
	perfRecordLostSamples  = 13
	perfRecordHeaderAttr   = 64
	perfRecordAuxtraceInfo = 70
	perfRecordAuxtrace     = 71
	perfRecordAuxtraceErr  = 72
	perfRecordTimeConv     = 79
)

// PERF_RECORD_AUX flags.
const (
	AuxFlagTruncated = 0x01
	AuxFlagOverwrite = 0x02
	AuxFlagPartial   = 0x04
	AuxFlagCollision = 0x08
)

// Indexes into the intel_pt AUXTRACE_INFO private words (tools/perf).
const (
	ptInfoPMUType        = 0
	ptInfoTSCBit         = 5
	ptInfoMTCBit         = 10
	ptInfoMTCFreqBits    = 11
	ptInfoTSCCTCN        = 12
	ptInfoTSCCTCD        = 13
	ptInfoCYCBit         = 14
	ptInfoMaxNonTurbo    = 15
	ptInfoAuxtraceType   = 1 // PERF_AUXTRACE_INTEL_PT
	perfPipeHeaderSize   = 16
	perfEventHeaderSize  = 8
	perfAuxtraceRecSize  = 48
	perfAuxtraceInfoSize = 16
)

// PerfStream is the PT data of one CPU (or one thread in per-thread mode).
type PerfStream struct {
	CPU int32 // -1 in per-thread mode
	TID int32
	Idx uint32 // perf's mmap index
	// Data is the stream, the concatenation of its AUXTRACE records'
	// data (PerfDataPT); nil for a stream of OpenPerfDataPT, read by
	// Reader.
	Data []byte
	// Size is the stream's length in bytes.
	Size int64

	src *perfSource // OpenPerfDataPT's file
}

// PerfTrace is what PerfDataPT extracts from a perf.data file.
type PerfTrace struct {
	Streams []PerfStream // sorted by CPU, then thread
	// Config is derived from AUXTRACE_INFO and the intel_pt event's
	// attribute when present (MTC frequency, TSC:CTC ratio, nominal ratio).
	Config  Config
	HasInfo bool     // an intel_pt AUXTRACE_INFO record was found
	Info    []uint64 // its private words
	// Loss counters: PERF_RECORD_AUX flags and lost records.
	AuxTruncated, AuxPartial, AuxCollision, AuxOverwrite int
	Lost, LostSamples, AuxtraceErrors                    int
	// TimeConv is the file's TSC to perf time conversion
	// (PERF_RECORD_TIME_CONV), nil when the file has none.
	TimeConv *PerfTimeConv
	// Truncated says where a cut file ends (PerfDataPTTruncated only).
	Truncated string
}

// PerfTimeConv is perf's conversion of TSC values to perf time (the
// clock of the samples' time fields), from the perf_event_mmap_page
// fields perf record saved in PERF_RECORD_TIME_CONV:
//
//	tsc' = Cycles + ((tsc - Cycles) & Mask)   only when UserTimeShort
//	ns   = Zero + (tsc' >> Shift) * Mult + ((tsc' & (2^Shift - 1)) * Mult) >> Shift
//
// Records of older perf versions hold only Shift, Mult and Zero.
type PerfTimeConv struct {
	Shift, Mult, Zero uint64
	Cycles, Mask      uint64
	// UserTimeZero and UserTimeShort are the cap_user_time_zero and
	// cap_user_time_short capabilities (false in the short record).
	UserTimeZero, UserTimeShort bool
}

// ToNS converts a TSC value to perf time in nanoseconds.
func (c *PerfTimeConv) ToNS(tsc uint64) uint64 {
	if c.UserTimeShort {
		tsc = c.Cycles + ((tsc - c.Cycles) & c.Mask)
	}
	quot := tsc >> c.Shift
	rem := tsc & (1<<c.Shift - 1)
	return c.Zero + quot*c.Mult + (rem*c.Mult)>>c.Shift
}

// Sizes of PERF_RECORD_TIME_CONV: shift, mult and zero; then cycles,
// mask and the capability bytes (perf 5.11 and later).
const (
	perfTimeConvShort = perfEventHeaderSize + 3*8
	perfTimeConvLong  = perfEventHeaderSize + 5*8 + 8
)

// parseTimeConv decodes a PERF_RECORD_TIME_CONV record at file offset off.
func parseTimeConv(rec []byte, off int) (*PerfTimeConv, error) {
	if len(rec) < perfTimeConvShort {
		return nil, perfErr(off, "short TIME_CONV record (%d bytes)", len(rec))
	}
	le := binary.LittleEndian
	c := &PerfTimeConv{Shift: le.Uint64(rec[8:]), Mult: le.Uint64(rec[16:]), Zero: le.Uint64(rec[24:])}
	if c.Shift > 63 {
		return nil, perfErr(off, "TIME_CONV time_shift %d > 63", c.Shift)
	}
	if len(rec) >= perfTimeConvLong {
		c.Cycles, c.Mask = le.Uint64(rec[32:]), le.Uint64(rec[40:])
		c.UserTimeZero, c.UserTimeShort = rec[48] != 0, rec[49] != 0
	}
	return c, nil
}

// Lossy reports whether perf recorded any loss.
func (t *PerfTrace) Lossy() bool {
	return t.Truncated != "" || t.AuxTruncated+t.AuxPartial+t.AuxCollision+t.Lost+t.LostSamples+t.AuxtraceErrors > 0
}

func perfErr(off int, format string, args ...any) error {
	return fmt.Errorf("%w: offset %#x: %s", ErrPerfData, off, fmt.Sprintf(format, args...))
}

// PerfDataPT parses a perf.data file (file or pipe mode) held in b. Stream
// data aliases b when a CPU has a single AUXTRACE record. A truncated file
// is an error (PerfDataPTTruncated reads what it can).
func PerfDataPT(b []byte) (*PerfTrace, error) { return perfDataPT(b, false) }

// PerfDataPTTruncated is PerfDataPT for a file that may be cut short (perf
// killed, disk full): it keeps the streams up to the cut (a cut AUXTRACE
// record's data as far as it goes) and says where the cut is in
// Truncated.
func PerfDataPTTruncated(b []byte) (*PerfTrace, error) { return perfDataPT(b, true) }

func perfDataPT(b []byte, tolerant bool) (*PerfTrace, error) {
	if !IsPerfData(b) || len(b) < perfPipeHeaderSize {
		return nil, perfErr(0, "missing PERFILE2 magic")
	}
	f, err := perfdata.OpenBytes(b)
	if err != nil {
		return nil, fromPerfdata(err)
	}
	parts := map[perfStreamKey][][]byte{}
	t, keys, err := scanPerfPT(f, tolerant, func(k perfStreamKey, from, n int64) {
		parts[k] = append(parts[k], b[from:from+n])
	})
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		s := &t.Streams[i]
		if ps := parts[k]; len(ps) == 1 {
			s.Data = ps[0]
		} else {
			s.Data = bytes.Join(ps, nil)
		}
	}
	return t, nil
}

// perfStreamKey names a PT stream of a perf.data: its CPU, and its thread
// in per-thread mode (-1 per CPU).
type perfStreamKey struct{ cpu, tid int32 }

// auxtraceKey is the stream of an AUXTRACE record (rec with its header).
func auxtraceKey(rec []byte) perfStreamKey {
	le := binary.LittleEndian
	k := perfStreamKey{int32(le.Uint32(rec[40:])), int32(le.Uint32(rec[36:]))}
	if k.cpu != -1 {
		k.tid = -1 // per-CPU: one stream per CPU whatever the thread
	}
	return k
}

// auxtracePayload is the part of an AUXTRACE record's payload that the
// file holds: its offset and size, cut at dataEnd (cut true) when the
// file ends inside it.
func auxtracePayload(r *perfdata.Record, dataEnd int64) (from, n int64, cut bool) {
	from, n = r.PayloadOffset, r.PayloadSize
	if n > dataEnd-from {
		return from, dataEnd - from, true
	}
	return from, n, false
}

// scanPerfPT reads the records of f as PerfDataPT does, giving aux each
// AUXTRACE payload (as much of it as the file holds) without reading it.
// The trace's Streams are sorted and have their Size set, not their
// Data; keys gives each stream's key.
func scanPerfPT(f *perfdata.File, tolerant bool, aux func(k perfStreamKey, from, n int64)) (*PerfTrace, []perfStreamKey, error) {
	truncated := f.Truncated
	if truncated != "" && !tolerant {
		return nil, nil, perfErr(int(f.Data.Offset), "%s", truncated)
	}
	attrs := f.Attrs
	t := &PerfTrace{}
	sizes := map[perfStreamKey]int64{}
	idx := map[perfStreamKey]uint32{}
	le := binary.LittleEndian
	dataEnd := f.Data.Offset + f.Data.Size
	rd := f.Records()
	defer rd.Close()
records:
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *perfdata.Error
			if tolerant && errors.As(err, &pe) && pe.Truncated {
				truncated = fmt.Sprintf("offset %#x: %s", pe.Offset, pe.Msg)
				break
			}
			return nil, nil, fromPerfdata(err)
		}
		rec, off := r.Data, int(r.Offset)
		switch r.Type {
		case perfRecordHeaderAttr:
			if a, err := perfdata.HeaderAttr(rec, r.Offset); err == nil {
				attrs = append(attrs, a)
			}
		case perfRecordAuxtraceInfo:
			if len(rec) < perfAuxtraceInfoSize {
				return nil, nil, perfErr(off, "short AUXTRACE_INFO")
			}
			if le.Uint32(rec[8:]) == ptInfoAuxtraceType {
				t.HasInfo = true
				t.Info = t.Info[:0]
				for o := perfAuxtraceInfoSize; o+8 <= len(rec); o += 8 {
					t.Info = append(t.Info, le.Uint64(rec[o:]))
				}
			}
		case perfRecordAuxtrace:
			if len(rec) < perfAuxtraceRecSize {
				return nil, nil, perfErr(off, "short AUXTRACE record")
			}
			from, n, cut := auxtracePayload(r, dataEnd)
			if cut {
				if !tolerant {
					return nil, nil, perfErr(off, "AUXTRACE data of %d bytes runs past the data section", r.PayloadSize)
				}
				truncated = fmt.Sprintf("offset %#x: AUXTRACE data of %d bytes cut after %d bytes (file truncated)", off, r.PayloadSize, n)
			}
			k := auxtraceKey(rec)
			idx[k] = le.Uint32(rec[32:])
			sizes[k] += n
			aux(k, from, n)
			if cut {
				break records
			}
		case perfRecordAux:
			if len(rec) >= perfEventHeaderSize+24 {
				f := le.Uint64(rec[perfEventHeaderSize+16:])
				if f&AuxFlagTruncated != 0 {
					t.AuxTruncated++
				}
				if f&AuxFlagPartial != 0 {
					t.AuxPartial++
				}
				if f&AuxFlagCollision != 0 {
					t.AuxCollision++
				}
				if f&AuxFlagOverwrite != 0 {
					t.AuxOverwrite++
				}
			}
		case perfRecordTimeConv:
			c, err := parseTimeConv(rec, off)
			if err != nil {
				return nil, nil, err
			}
			t.TimeConv = c
		case perfRecordLost:
			t.Lost++
		case perfRecordLostSamples:
			t.LostSamples++
		case perfRecordAuxtraceErr:
			t.AuxtraceErrors++
		}
	}
	keys := make([]perfStreamKey, 0, len(sizes))
	for k := range sizes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].cpu != keys[j].cpu {
			return keys[i].cpu < keys[j].cpu
		}
		return keys[i].tid < keys[j].tid
	})
	for _, k := range keys {
		t.Streams = append(t.Streams, PerfStream{CPU: k.cpu, TID: k.tid, Idx: idx[k], Size: sizes[k]})
	}
	if t.HasInfo {
		t.Config = configFromInfo(t.Info, attrs)
	}
	t.Truncated = truncated
	return t, keys, nil
}

// fromPerfdata makes a perfdata error this package's (ErrPerfData, with
// the offset).
func fromPerfdata(err error) error {
	var pe *perfdata.Error
	if errors.As(err, &pe) {
		return perfErr(int(pe.Offset), "%s", pe.Msg)
	}
	return fmt.Errorf("%w: %v", ErrPerfData, err)
}

// configFromInfo derives the decoder configuration from the intel_pt
// AUXTRACE_INFO words and the intel_pt event attribute.
func configFromInfo(info []uint64, attrs []perfdata.Attr) Config {
	var c Config
	get := func(i int) uint64 {
		if i < len(info) {
			return info[i]
		}
		return 0
	}
	c.CPUID15EBX = uint32(get(ptInfoTSCCTCN))
	c.CPUID15EAX = uint32(get(ptInfoTSCCTCD))
	c.NomFreq = uint8(get(ptInfoMaxNonTurbo))
	pmu := get(ptInfoPMUType)
	mtcMask := get(ptInfoMTCFreqBits) // a mask of the mtc_period format bits
	for _, a := range attrs {
		if uint64(a.Type) != pmu {
			continue
		}
		config := a.Config
		if mtcMask != 0 {
			c.MTCFreq = uint8((config & mtcMask) >> bits.TrailingZeros64(mtcMask))
		}
		break
	}
	return c
}
