package intelpt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sort"
)

// perf.data support: extract the PT data (PERF_RECORD_AUXTRACE) that
// `perf record -e intel_pt//` stores, per CPU, with the recording parameters
// from PERF_RECORD_AUXTRACE_INFO.

// PerfMagic starts every perf.data file (file and pipe mode).
var PerfMagic = []byte("PERFILE2")

// IsPerfData reports whether b starts like a perf.data file.
func IsPerfData(b []byte) bool { return bytes.HasPrefix(b, PerfMagic) }

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
	perfRecordCompressed   = 81
	perfRecordCompressed2  = 83
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
	perfFileHeaderSize   = 104
	perfPipeHeaderSize   = 16
	perfEventHeaderSize  = 8
	perfAuxtraceRecSize  = 48
	perfAuxtraceInfoSize = 16
)

// PerfStream is the PT data of one CPU (or one thread in per-thread mode).
type PerfStream struct {
	CPU  int32 // -1 in per-thread mode
	TID  int32
	Idx  uint32 // perf's mmap index
	Data []byte
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
	le := binary.LittleEndian
	hsize := le.Uint64(b[8:])
	var dataOff, dataEnd uint64
	var attrs [][]byte
	truncated := ""
	switch {
	case hsize == perfPipeHeaderSize:
		dataOff, dataEnd = perfPipeHeaderSize, uint64(len(b))
	case hsize >= perfFileHeaderSize && uint64(len(b)) >= hsize:
		attrSize := le.Uint64(b[16:])
		aOff, aSize := le.Uint64(b[24:]), le.Uint64(b[32:])
		dataOff, dataEnd = le.Uint64(b[40:]), le.Uint64(b[40:])+le.Uint64(b[48:])
		if dataEnd < dataOff || dataEnd > uint64(len(b)) {
			if !tolerant || dataOff > uint64(len(b)) {
				return nil, perfErr(40, "data section %#x+%#x outside the file (%d bytes)", dataOff, dataEnd-dataOff, len(b))
			}
			truncated = fmt.Sprintf("the data section (%#x+%#x) runs past the end of the file (%d bytes): file truncated", dataOff, dataEnd-dataOff, len(b))
			dataEnd = uint64(len(b))
		}
		if aSize > 0 {
			if aOff+aSize < aOff || aOff+aSize > uint64(len(b)) || attrSize < 16+8 || attrSize > aSize {
				return nil, perfErr(24, "bad attribute section")
			}
			for o := aOff; o+attrSize <= aOff+aSize; o += attrSize {
				attrs = append(attrs, b[o:o+attrSize-16]) // minus the ids section
			}
		}
	default:
		return nil, perfErr(8, "bad header size %d", hsize)
	}
	t := &PerfTrace{}
	type key struct{ cpu, tid int32 }
	parts := map[key][][]byte{}
	idx := map[key]uint32{}
	off := dataOff
	for off < dataEnd {
		if dataEnd-off < perfEventHeaderSize {
			if tolerant {
				truncated = fmt.Sprintf("offset %#x: file truncated in a record header", off)
				break
			}
			return nil, perfErr(int(off), "truncated record header")
		}
		typ := le.Uint32(b[off:])
		size := uint64(le.Uint16(b[off+6:]))
		if size < perfEventHeaderSize || off+size > dataEnd {
			if tolerant && size >= perfEventHeaderSize {
				truncated = fmt.Sprintf("offset %#x: file truncated in a record of %d bytes", off, size)
				break
			}
			return nil, perfErr(int(off), "record size %d out of bounds", size)
		}
		rec := b[off : off+size]
		next := off + size
		switch typ {
		case perfRecordHeaderAttr:
			if len(rec) >= perfEventHeaderSize+16 {
				attrs = append(attrs, rec[perfEventHeaderSize:])
			}
		case perfRecordAuxtraceInfo:
			if len(rec) < perfAuxtraceInfoSize {
				return nil, perfErr(int(off), "short AUXTRACE_INFO")
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
				return nil, perfErr(int(off), "short AUXTRACE record")
			}
			n := le.Uint64(rec[8:])
			if n > dataEnd-next {
				if !tolerant {
					return nil, perfErr(int(off), "AUXTRACE data of %d bytes runs past the data section", n)
				}
				truncated = fmt.Sprintf("offset %#x: AUXTRACE data of %d bytes cut after %d bytes (file truncated)", off, n, dataEnd-next)
				n = dataEnd - next
			}
			k := key{int32(le.Uint32(rec[40:])), int32(le.Uint32(rec[36:]))}
			if k.cpu != -1 {
				k.tid = -1 // per-CPU: one stream per CPU whatever the thread
			}
			idx[k] = le.Uint32(rec[32:])
			parts[k] = append(parts[k], b[next:next+n])
			next += n
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
			c, err := parseTimeConv(rec, int(off))
			if err != nil {
				return nil, err
			}
			t.TimeConv = c
		case perfRecordLost:
			t.Lost++
		case perfRecordLostSamples:
			t.LostSamples++
		case perfRecordAuxtraceErr:
			t.AuxtraceErrors++
		case perfRecordCompressed, perfRecordCompressed2:
			return nil, perfErr(int(off), "compressed records (perf record -z) are not supported: record without -z or run 'perf inject -i IN -o OUT' to decompress")
		}
		off = next
	}
	for k, ps := range parts {
		s := PerfStream{CPU: k.cpu, TID: k.tid, Idx: idx[k]}
		if len(ps) == 1 {
			s.Data = ps[0]
		} else {
			s.Data = bytes.Join(ps, nil)
		}
		t.Streams = append(t.Streams, s)
	}
	sort.Slice(t.Streams, func(i, j int) bool {
		a, c := t.Streams[i], t.Streams[j]
		if a.CPU != c.CPU {
			return a.CPU < c.CPU
		}
		return a.TID < c.TID
	})
	if t.HasInfo {
		t.Config = configFromInfo(t.Info, attrs)
	}
	t.Truncated = truncated
	return t, nil
}

// configFromInfo derives the decoder configuration from the intel_pt
// AUXTRACE_INFO words and the intel_pt event attribute.
func configFromInfo(info []uint64, attrs [][]byte) Config {
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
		if len(a) < 16 || uint64(binary.LittleEndian.Uint32(a)) != pmu {
			continue
		}
		config := binary.LittleEndian.Uint64(a[8:])
		if mtcMask != 0 {
			c.MTCFreq = uint8((config & mtcMask) >> bits.TrailingZeros64(mtcMask))
		}
		break
	}
	return c
}
