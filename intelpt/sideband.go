package intelpt

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
)

// Sideband: the perf records that describe the traced address spaces and
// threads (PERF_RECORD_MMAP/MMAP2, COMM, FORK/EXIT, ITRACE_START,
// SWITCH/SWITCH_CPU_WIDE, AUX, LOST). perf.data holds them in its data
// section; `iotap pt capture` stores the kernel's records as they came
// (cpuN.sideband) with the sample_type in capture.json. Both are decoded by
// DecodeSidebandRecord.

// Kernel record types (include/uapi/linux/perf_event.h).
const (
	PerfRecordMmap          = 1
	PerfRecordLost          = 2
	PerfRecordComm          = 3
	PerfRecordExit          = 4
	PerfRecordThrottle      = 5
	PerfRecordUnthrottle    = 6
	PerfRecordFork          = 7
	PerfRecordRead          = 8
	PerfRecordSample        = 9
	PerfRecordMmap2         = 10
	PerfRecordAux           = 11
	PerfRecordItraceStart   = 12
	PerfRecordLostSamples   = 13
	PerfRecordSwitch        = 14
	PerfRecordSwitchCPUWide = 15
	PerfRecordNamespaces    = 16
	PerfRecordKsymbol       = 17
	PerfRecordBPFEvent      = 18
	PerfRecordCgroup        = 19
	PerfRecordTextPoke      = 20
	PerfRecordAuxOutputHWID = 21
)

// perf tool record types (tools/lib/perf/include/perf/event.h) that
// perf.data may hold; they carry no sideband.
var perfToolRecords = map[uint32]string{
	64: "HEADER_ATTR", 65: "HEADER_EVENT_TYPE", 66: "HEADER_TRACING_DATA", 67: "HEADER_BUILD_ID",
	68: "FINISHED_ROUND", 69: "ID_INDEX", 70: "AUXTRACE_INFO", 71: "AUXTRACE", 72: "AUXTRACE_ERROR",
	73: "THREAD_MAP", 74: "CPU_MAP", 75: "STAT_CONFIG", 76: "STAT", 77: "STAT_ROUND", 78: "EVENT_UPDATE",
	79: "TIME_CONV", 80: "HEADER_FEATURE", 81: "COMPRESSED", 82: "FINISHED_INIT", 83: "COMPRESSED2",
	84: "BPF_METADATA", 85: "SCHEDSTAT_CPU", 86: "SCHEDSTAT_DOMAIN",
}

var perfKernelRecords = [...]string{
	1: "MMAP", 2: "LOST", 3: "COMM", 4: "EXIT", 5: "THROTTLE", 6: "UNTHROTTLE", 7: "FORK", 8: "READ",
	9: "SAMPLE", 10: "MMAP2", 11: "AUX", 12: "ITRACE_START", 13: "LOST_SAMPLES", 14: "SWITCH",
	15: "SWITCH_CPU_WIDE", 16: "NAMESPACES", 17: "KSYMBOL", 18: "BPF_EVENT", 19: "CGROUP",
	20: "TEXT_POKE", 21: "AUX_OUTPUT_HW_ID",
}

// PerfRecordName returns perf's name of a record type without the
// PERF_RECORD_ prefix ("MMAP2"), or "" for a type this package does not know.
func PerfRecordName(typ uint32) string {
	if typ < uint32(len(perfKernelRecords)) {
		return perfKernelRecords[typ]
	}
	return perfToolRecords[typ]
}

// Header misc bits.
const (
	PerfMiscCPUModeMask = 0x7
	PerfMiscKernel      = 1
	PerfMiscUser        = 2
	PerfMiscCommExec    = 1 << 13 // COMM: the comm changed at exec
	PerfMiscSwitchOut   = 1 << 13 // SWITCH: switched out (else in)
	PerfMiscMmapData    = 1 << 13 // MMAP: a data (not executable) mapping
	PerfMiscPreempt     = 1 << 14 // SWITCH out: the task was preempted
	PerfMiscMmapBuildID = 1 << 14 // MMAP2: carries a build-id instead of device/inode
)

// sample_type bits that make up the sample_id trailer of non-sample
// records when sample_id_all is set.
const (
	perfSampleTID        = 1 << 1
	perfSampleTime       = 1 << 2
	perfSampleID         = 1 << 6
	perfSampleCPU        = 1 << 7
	perfSampleStreamID   = 1 << 9
	perfSampleIdentifier = 1 << 16
	perfSampleIDMask     = perfSampleTID | perfSampleTime | perfSampleID | perfSampleCPU | perfSampleStreamID | perfSampleIdentifier
)

// SampleIDSize is the size of the sample_id trailer that sample_id_all
// appends to every non-sample record for the given sample_type.
func SampleIDSize(sampleType uint64) int {
	return 8 * bits.OnesCount64(sampleType&perfSampleIDMask)
}

// SidebandRecord is one decoded sideband record. Fields that a record type
// does not have stay zero; the sample_id trailer fills PID/TID (when the
// body has none), Time and CPU.
type SidebandRecord struct {
	Offset int64  // offset of the record in its file
	Type   uint32 // PerfRecord*
	Misc   uint16
	Size   uint16

	PID, TID int32 // MMAP*, COMM, FORK/EXIT, ITRACE_START, or the sample_id
	HasTime  bool  // Time comes from the sample_id trailer
	Time     uint64
	CPU      int32 // -1 when the records have no CPU field
	ID       uint64

	// MMAP, MMAP2
	Addr, Len, PgOff uint64
	Maj, Min         uint32
	Ino, InoGen      uint64
	Prot, Flags      uint32
	BuildID          []byte // MMAP2 with PerfMiscMmapBuildID (aliases the input)
	Filename         string
	// COMM
	Comm string
	// FORK, EXIT: parent; FORK/EXIT time
	PPID, PTID int32
	TaskTime   uint64
	// SWITCH_CPU_WIDE: the next (switch out) or previous (switch in) task
	NextPrevPID, NextPrevTID int32
	// AUX
	AuxOffset, AuxSize, AuxFlags uint64
	// LOST (records lost), LOST_SAMPLES
	Lost uint64
}

// Kind returns perf's name of the record type, or "type_N".
func (r *SidebandRecord) Kind() string {
	if n := PerfRecordName(r.Type); n != "" {
		return n
	}
	return fmt.Sprintf("type_%d", r.Type)
}

// SwitchOut reports whether a SWITCH/SWITCH_CPU_WIDE record is a switch out.
func (r *SidebandRecord) SwitchOut() bool { return r.Misc&PerfMiscSwitchOut != 0 }

// Exec reports whether a COMM record comes from an exec.
func (r *SidebandRecord) Exec() bool { return r.Misc&PerfMiscCommExec != 0 }

// Executable reports whether a mapping record maps code: MMAP without
// the data bit, MMAP2 with PROT_EXEC (or without the data bit when the
// record has no prot: MMAP2 with a build-id keeps prot).
func (r *SidebandRecord) Executable() bool {
	if r.Type == PerfRecordMmap2 {
		return r.Prot&4 != 0 || (r.Prot == 0 && r.Misc&PerfMiscMmapData == 0)
	}
	return r.Misc&PerfMiscMmapData == 0
}

// BuildIDHex returns the build-id in lower-case hex ("" when none).
func (r *SidebandRecord) BuildIDHex() string { return hex.EncodeToString(r.BuildID) }

// ErrSideband wraps malformed sideband records.
var ErrSideband = fmt.Errorf("bad sideband record")

// DecodeSidebandRecord decodes the record rec (header included) found at
// offset off. sampleType is the event's perf_event_attr.sample_type and
// sampleIDAll its sample_id_all bit (the trailer is absent without it).
// Records this package does not decode are returned with their header
// fields only.
func DecodeSidebandRecord(rec []byte, off int64, sampleType uint64, sampleIDAll bool, r *SidebandRecord) error {
	*r = SidebandRecord{Offset: off, CPU: -1}
	if len(rec) < perfEventHeaderSize {
		return fmt.Errorf("%w: offset %#x: %d bytes, shorter than a record header", ErrSideband, off, len(rec))
	}
	le := binary.LittleEndian
	r.Type = le.Uint32(rec)
	r.Misc = le.Uint16(rec[4:])
	r.Size = le.Uint16(rec[6:])
	if int(r.Size) != len(rec) || r.Size < perfEventHeaderSize {
		return fmt.Errorf("%w: offset %#x: record size %d, %d bytes given", ErrSideband, off, r.Size, len(rec))
	}
	if r.Type == PerfRecordSample || r.Type >= 64 {
		return nil
	}
	body := rec[perfEventHeaderSize:]
	bad := func(why string) error {
		return fmt.Errorf("%w: offset %#x: %s record of %d bytes: %s", ErrSideband, off, r.Kind(), len(rec), why)
	}
	if sampleIDAll {
		n := SampleIDSize(sampleType)
		if len(body) < n {
			return bad("too short for its sample_id fields")
		}
		id := body[len(body)-n:]
		body = body[:len(body)-n]
		if sampleType&perfSampleTID != 0 {
			r.PID, r.TID = int32(le.Uint32(id)), int32(le.Uint32(id[4:]))
			id = id[8:]
		}
		if sampleType&perfSampleTime != 0 {
			r.Time, r.HasTime = le.Uint64(id), true
			id = id[8:]
		}
		if sampleType&perfSampleID != 0 {
			r.ID = le.Uint64(id)
			id = id[8:]
		}
		if sampleType&perfSampleStreamID != 0 {
			id = id[8:]
		}
		if sampleType&perfSampleCPU != 0 {
			r.CPU = int32(le.Uint32(id))
			id = id[8:]
		}
		if sampleType&perfSampleIdentifier != 0 {
			r.ID = le.Uint64(id)
		}
	}
	cstr := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	switch r.Type {
	case PerfRecordMmap:
		if len(body) < 32 {
			return bad("short")
		}
		r.PID, r.TID = int32(le.Uint32(body)), int32(le.Uint32(body[4:]))
		r.Addr, r.Len, r.PgOff = le.Uint64(body[8:]), le.Uint64(body[16:]), le.Uint64(body[24:])
		r.Filename = cstr(body[32:])
	case PerfRecordMmap2:
		if len(body) < 64 {
			return bad("short")
		}
		r.PID, r.TID = int32(le.Uint32(body)), int32(le.Uint32(body[4:]))
		r.Addr, r.Len, r.PgOff = le.Uint64(body[8:]), le.Uint64(body[16:]), le.Uint64(body[24:])
		if r.Misc&PerfMiscMmapBuildID != 0 {
			n := int(body[32])
			if n > 20 {
				return bad(fmt.Sprintf("build-id size %d > 20", n))
			}
			r.BuildID = body[36 : 36+n]
		} else {
			r.Maj, r.Min = le.Uint32(body[32:]), le.Uint32(body[36:])
			r.Ino, r.InoGen = le.Uint64(body[40:]), le.Uint64(body[48:])
		}
		r.Prot, r.Flags = le.Uint32(body[56:]), le.Uint32(body[60:])
		r.Filename = cstr(body[64:])
	case PerfRecordComm:
		if len(body) < 8 {
			return bad("short")
		}
		r.PID, r.TID = int32(le.Uint32(body)), int32(le.Uint32(body[4:]))
		r.Comm = cstr(body[8:])
	case PerfRecordFork, PerfRecordExit:
		if len(body) < 24 {
			return bad("short")
		}
		r.PID, r.PPID = int32(le.Uint32(body)), int32(le.Uint32(body[4:]))
		r.TID, r.PTID = int32(le.Uint32(body[8:])), int32(le.Uint32(body[12:]))
		r.TaskTime = le.Uint64(body[16:])
	case PerfRecordLost:
		if len(body) < 16 {
			return bad("short")
		}
		r.ID, r.Lost = le.Uint64(body), le.Uint64(body[8:])
	case PerfRecordLostSamples:
		if len(body) < 8 {
			return bad("short")
		}
		r.Lost = le.Uint64(body)
	case PerfRecordAux:
		if len(body) < 24 {
			return bad("short")
		}
		r.AuxOffset, r.AuxSize, r.AuxFlags = le.Uint64(body), le.Uint64(body[8:]), le.Uint64(body[16:])
	case PerfRecordItraceStart:
		if len(body) < 8 {
			return bad("short")
		}
		r.PID, r.TID = int32(le.Uint32(body)), int32(le.Uint32(body[4:]))
	case PerfRecordSwitchCPUWide:
		if len(body) < 8 {
			return bad("short")
		}
		r.NextPrevPID, r.NextPrevTID = int32(le.Uint32(body)), int32(le.Uint32(body[4:]))
	}
	return nil
}
