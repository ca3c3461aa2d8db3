package userevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// perfSample builds a PERF_RECORD_SAMPLE of PerfSampleType, padded to 8
// bytes as the kernel pads it.
func perfSample(pid, tid uint32, ts uint64, cpu uint32, raw []byte) []byte {
	body := binary.LittleEndian.AppendUint32(nil, pid)
	body = binary.LittleEndian.AppendUint32(body, tid)
	body = binary.LittleEndian.AppendUint64(body, ts)
	body = binary.LittleEndian.AppendUint32(body, cpu)
	body = binary.LittleEndian.AppendUint32(body, 0)
	body = binary.LittleEndian.AppendUint32(body, uint32(len(raw)))
	body = append(body, raw...)
	for (8+len(body))%8 != 0 {
		body = append(body, 0)
	}
	return perfRec(PerfRecordSample, body)
}

func perfRec(typ uint32, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(8+len(body)))
	return append(b, body...)
}

func TestDecodePerfRecord(t *testing.T) {
	raw := []byte{0x34, 0x12, 0, 0, 81, 0, 0, 0, 7, 0, 0, 0} // common_type 0x1234, pid 81, one u32
	s := perfSample(81, 82, 15071234567, 1, raw)
	r, n, err := DecodePerfRecord(append(s, 0xff, 0xff)) // trailing bytes: the next record
	if err != nil || n != len(s) || r.Type != PerfRecordSample || r.PID != 81 || r.TID != 82 ||
		r.Time != 15071234567 || r.CPU != 1 || !bytes.Equal(r.Raw, raw) {
		t.Fatalf("sample: %+v %d %v", r, n, err)
	}
	lost := perfRec(PerfRecordLost, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 9), 1927))
	if r, n, err := DecodePerfRecord(lost); err != nil || n != 24 || r.Lost != 1927 {
		t.Fatalf("lost: %+v %d %v", r, n, err)
	}
	ls := perfRec(PerfRecordLostSamples, binary.LittleEndian.AppendUint64(nil, 5))
	if r, _, err := DecodePerfRecord(ls); err != nil || r.Lost != 5 {
		t.Fatalf("lost samples: %+v %v", r, err)
	}
	if r, n, err := DecodePerfRecord(perfRec(3, []byte("comm\x00\x00\x00\x00"))); err != nil || n != 16 || r.Type != 3 {
		t.Fatalf("other type: %+v %d %v", r, n, err)
	}
	tooSmall := perfRec(PerfRecordSample, make([]byte, 8))
	binary.LittleEndian.PutUint16(tooSmall[6:], 4)
	bigRaw := append([]byte(nil), s...)
	binary.LittleEndian.PutUint32(bigRaw[8+24:], 1000)
	for name, tc := range map[string]struct {
		b   []byte
		off int
	}{
		"short header":   {s[:7], 0},
		"size too small": {tooSmall, 6},
		"size past end":  {s[:len(s)-8], 6},
		"short sample":   {perfRec(PerfRecordSample, make([]byte, 16)), 8},
		"raw past end":   {bigRaw, 32},
		"short lost":     {perfRec(PerfRecordLost, make([]byte, 8)), 8},
	} {
		_, _, err := DecodePerfRecord(tc.b)
		var pe *PerfRecordError
		if !errors.As(err, &pe) || pe.Offset != tc.off || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want an error at byte %d", name, err, tc.off)
		}
	}
}

// FuzzDecodePerfRecord: never panics; a decoded record lies inside the
// input and its raw data inside the record.
func FuzzDecodePerfRecord(f *testing.F) {
	f.Add(perfSample(81, 82, 1, 0, []byte{1, 0, 0, 0, 81, 0, 0, 0}))
	f.Add(perfRec(PerfRecordLost, make([]byte, 16)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := DecodePerfRecord(b)
		if err != nil {
			return
		}
		if n < 8 || n > len(b) || len(r.Raw) > n {
			t.Fatalf("record of %d bytes (raw %d) from %d", n, len(r.Raw), len(b))
		}
	})
}
