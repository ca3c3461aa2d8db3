package intelpt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"unsafe"
)

// FuzzDecodeCaptureInfo: capture.json from a user's directory never
// panics the decoder; what it accepts is written back by encoding/json
// and decodes to the same CaptureInfo (nothing read that cannot be
// written).
func FuzzDecodeCaptureInfo(f *testing.F) {
	if b, err := os.ReadFile("testdata/capture.json.golden"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"tool":"iotap","tsc":{"time_shift":64}}`))
	f.Add([]byte(`{"buffers":[{"cpu":-1,"file":"../x"}],"config":[1,2,3]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ci, err := DecodeCaptureInfo(bytes.NewReader(b))
		if err != nil {
			return
		}
		if ci.TSC != nil && ci.TSC.Shift > 63 {
			t.Fatalf("accepted a TSC shift of %d", ci.TSC.Shift)
		}
		out, err := json.Marshal(ci)
		if err != nil {
			t.Fatalf("decoded, but not written back: %v", err)
		}
		again, err := DecodeCaptureInfo(bytes.NewReader(out))
		if err != nil || !reflect.DeepEqual(ci, again) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, ci, again)
		}
	})
}

// FuzzDecodeSidebandRecord: one perf record of the sideband, with any
// sample_type, never panics the decoder; an accepted record has the
// size of its bytes, and its build-id lies inside them.
func FuzzDecodeSidebandRecord(f *testing.F) {
	le := binary.LittleEndian
	rec := func(typ uint32, misc uint16, body []byte) []byte {
		b := le.AppendUint32(nil, typ)
		b = le.AppendUint16(b, misc)
		b = le.AppendUint16(b, uint16(8+len(body)))
		return append(b, body...)
	}
	mmap2 := make([]byte, 40)
	le.PutUint64(mmap2[8:], 0x400000)
	mmap2[32] = 20 // build-id size, over the 20 bytes that follow
	f.Add(rec(PerfRecordMmap2, PerfMiscMmapBuildID, append(mmap2, []byte("/bin/prog\x00\x00\x00\x00\x00\x00\x00")...)), uint64(0x10087), true)
	f.Add(rec(PerfRecordComm, 0, []byte("\x01\x00\x00\x00\x01\x00\x00\x00prog\x00\x00\x00\x00")), uint64(0), false)
	f.Add(rec(PerfRecordMmap, 0, make([]byte, 32)), uint64(0x7), true)
	f.Add([]byte{1, 0, 0, 0}, uint64(0), false)
	f.Fuzz(func(t *testing.T, b []byte, sampleType uint64, all bool) {
		var r SidebandRecord
		if err := DecodeSidebandRecord(b, 0x100, sampleType, all, &r); err != nil {
			return
		}
		if int(r.Size) != len(b) {
			t.Fatalf("record of %d bytes accepted as %d", len(b), r.Size)
		}
		if n := len(r.BuildID); n > 0 {
			p := uintptr(unsafe.Pointer(&r.BuildID[0]))
			lo := uintptr(unsafe.Pointer(&b[0]))
			if p < lo || p+uintptr(n) > lo+uintptr(len(b)) {
				t.Fatalf("build-id of %d bytes outside the record", n)
			}
		}
	})
}
