package userevents

import (
	"encoding/binary"
	"fmt"
)

// Perf ring-buffer record types (include/uapi/linux/perf_event.h).
const (
	PerfRecordLost        = 2  // PERF_RECORD_LOST: u64 id, u64 lost
	PerfRecordSample      = 9  // PERF_RECORD_SAMPLE
	PerfRecordLostSamples = 13 // PERF_RECORD_LOST_SAMPLES: u64 lost
)

// PerfSampleType is the sample_type PerfReader asks for: PERF_SAMPLE_TID
// | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW. DecodePerfRecord
// decodes samples of exactly that layout: pid u32, tid u32, time u64, cpu
// u32, reserved u32, raw size u32, raw data (the trace entry, common
// fields first, padded so that the record stays 8-byte aligned).
const PerfSampleType = 0x2 | 0x4 | 0x80 | 0x400

// PerfRecord is one record of a perf ring buffer.
type PerfRecord struct {
	Type uint32
	Misc uint16
	// Samples.
	PID, TID uint32
	Time     uint64 // perf clock (local: nanoseconds since boot)
	CPU      uint32
	Raw      []byte // the trace entry: a sub-slice of the input
	// PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES.
	Lost uint64
}

// PerfRecordError is a malformed perf record at byte Offset of the input.
type PerfRecordError struct {
	Offset int
	Msg    string
}

func (e *PerfRecordError) Error() string {
	return fmt.Sprintf("userevents: perf record at byte %d: %s", e.Offset, e.Msg)
}

func (e *PerfRecordError) Unwrap() error { return ErrInvalid }

// DecodePerfRecord decodes the record at the start of b (a record copied
// out of the ring, wrap-around undone) and returns it with its size.
// Records of other types are returned with Type set and nothing decoded.
func DecodePerfRecord(b []byte) (PerfRecord, int, error) {
	var r PerfRecord
	if len(b) < 8 {
		return r, 0, &PerfRecordError{0, fmt.Sprintf("%d bytes, short of a record header", len(b))}
	}
	r.Type = binary.LittleEndian.Uint32(b)
	r.Misc = binary.LittleEndian.Uint16(b[4:])
	size := int(binary.LittleEndian.Uint16(b[6:]))
	if size < 8 || size > len(b) {
		return r, 0, &PerfRecordError{6, fmt.Sprintf("record size %d outside 8..%d", size, len(b))}
	}
	body := b[8:size]
	switch r.Type {
	case PerfRecordSample:
		if len(body) < 28 {
			return r, 0, &PerfRecordError{8, fmt.Sprintf("sample of %d bytes, short of its 28-byte head", len(body))}
		}
		r.PID = binary.LittleEndian.Uint32(body)
		r.TID = binary.LittleEndian.Uint32(body[4:])
		r.Time = binary.LittleEndian.Uint64(body[8:])
		r.CPU = binary.LittleEndian.Uint32(body[16:])
		n := binary.LittleEndian.Uint32(body[24:])
		if uint64(n) > uint64(len(body)-28) {
			return r, 0, &PerfRecordError{8 + 24, fmt.Sprintf("raw size %d, only %d bytes left", n, len(body)-28)}
		}
		r.Raw = body[28 : 28+int(n)]
	case PerfRecordLost:
		if len(body) < 16 {
			return r, 0, &PerfRecordError{8, "short PERF_RECORD_LOST"}
		}
		r.Lost = binary.LittleEndian.Uint64(body[8:])
	case PerfRecordLostSamples:
		if len(body) < 8 {
			return r, 0, &PerfRecordError{8, "short PERF_RECORD_LOST_SAMPLES"}
		}
		r.Lost = binary.LittleEndian.Uint64(body)
	}
	return r, size, nil
}
