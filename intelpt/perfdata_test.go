package intelpt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/iotap/iotap/perfdata"
)

// perfWriter builds a small synthetic perf.data file (file mode) the way
// `perf record -e intel_pt//` lays it out: header, one attribute, data
// records. This machine cannot record intel_pt, so the tests use it.
type perfWriter struct{ data []byte }

func (w *perfWriter) record(typ uint32, body []byte, extra []byte) {
	le := binary.LittleEndian
	h := make([]byte, 8)
	le.PutUint32(h, typ)
	le.PutUint16(h[6:], uint16(8+len(body)))
	w.data = append(append(append(w.data, h...), body...), extra...)
}

func (w *perfWriter) auxtraceInfo(priv []uint64) {
	body := make([]byte, 8+8*len(priv))
	binary.LittleEndian.PutUint32(body, ptInfoAuxtraceType)
	for i, v := range priv {
		binary.LittleEndian.PutUint64(body[8+8*i:], v)
	}
	w.record(perfRecordAuxtraceInfo, body, nil)
}

func (w *perfWriter) auxtrace(cpu, tid int32, idx uint32, data []byte) {
	le := binary.LittleEndian
	body := make([]byte, 40)
	le.PutUint64(body, uint64(len(data)))
	le.PutUint32(body[24:], idx)
	le.PutUint32(body[28:], uint32(tid))
	le.PutUint32(body[32:], uint32(cpu))
	w.record(perfRecordAuxtrace, body, data)
}

func (w *perfWriter) aux(flags uint64) {
	body := make([]byte, 24)
	binary.LittleEndian.PutUint64(body[16:], flags)
	w.record(perfRecordAux, body, nil)
}

// file returns the whole perf.data with one intel_pt attribute of the given
// PMU type and config.
func (w *perfWriter) file(pmuType uint32, config uint64) []byte {
	le := binary.LittleEndian
	const attrSize = 136 // PERF_ATTR_SIZE_VER8
	attr := make([]byte, attrSize+16)
	le.PutUint32(attr, pmuType)
	le.PutUint32(attr[4:], attrSize)
	le.PutUint64(attr[8:], config)
	h := make([]byte, perfdata.FileHeaderSize)
	copy(h, PerfMagic)
	le.PutUint64(h[8:], perfdata.FileHeaderSize)
	le.PutUint64(h[16:], uint64(len(attr)))
	le.PutUint64(h[24:], perfdata.FileHeaderSize)
	le.PutUint64(h[32:], uint64(len(attr)))
	le.PutUint64(h[40:], uint64(perfdata.FileHeaderSize+len(attr)))
	le.PutUint64(h[48:], uint64(len(w.data)))
	return append(append(h, attr...), w.data...)
}

func TestPerfDataPT(t *testing.T) {
	var e0, e1 Encoder
	e0.Encode(Packet{Kind: KindPSB})
	e0.Encode(Packet{Kind: KindPSBEnd})
	e1.Encode(Packet{Kind: KindPSB})
	e1.Encode(Packet{Kind: KindTSC, Payload: 0x1234})
	first := append([]byte(nil), e0.Bytes()...)
	more := []byte{0x00, 0x00, 0x4c} // pad, pad, tnt

	var w perfWriter
	priv := make([]uint64, 17)
	priv[ptInfoPMUType] = 8
	priv[ptInfoMTCFreqBits] = 0x3c000 // mtc_period is config:14-17
	priv[ptInfoTSCCTCN], priv[ptInfoTSCCTCD] = 84, 2
	priv[ptInfoMaxNonTurbo] = 24
	w.auxtraceInfo(priv)
	w.auxtrace(1, 100, 1, e1.Bytes())
	w.auxtrace(0, 100, 0, first)
	w.aux(AuxFlagTruncated)
	w.auxtrace(0, 101, 0, more)
	w.aux(AuxFlagPartial | AuxFlagCollision)
	file := w.file(8, 3<<14|1<<10)

	if !IsPerfData(file) {
		t.Fatal("magic not recognised")
	}
	tr, err := PerfDataPT(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Streams) != 2 || tr.Streams[0].CPU != 0 || tr.Streams[1].CPU != 1 {
		t.Fatalf("streams: %+v", tr.Streams)
	}
	if !bytes.Equal(tr.Streams[0].Data, append(first, more...)) || !bytes.Equal(tr.Streams[1].Data, e1.Bytes()) {
		t.Fatalf("stream data: %x / %x", tr.Streams[0].Data, tr.Streams[1].Data)
	}
	want := Config{MTCFreq: 3, NomFreq: 24, CPUID15EAX: 2, CPUID15EBX: 84}
	if !tr.HasInfo || tr.Config != want {
		t.Fatalf("config %+v, want %+v", tr.Config, want)
	}
	if tr.AuxTruncated != 1 || tr.AuxPartial != 1 || tr.AuxCollision != 1 || !tr.Lossy() {
		t.Fatalf("loss counters: %+v", tr)
	}

	// Damaged files are errors with an offset, never panics.
	for _, cut := range []int{9, 20, 60, len(file) - 1} {
		if _, err := PerfDataPT(file[:cut]); !errors.Is(err, ErrPerfData) {
			t.Errorf("file cut at %d: %v", cut, err)
		}
	}
}

func FuzzPerfDataPT(f *testing.F) {
	var w perfWriter
	w.auxtraceInfo(make([]uint64, 17))
	w.auxtrace(0, 1, 0, []byte{0x02, 0x82})
	f.Add(w.file(8, 0))
	w.timeConv(PerfTimeConv{Shift: 31, Mult: 1 << 30, Zero: 1e9, Cycles: 5, Mask: 1<<32 - 1, UserTimeShort: true}, true)
	f.Add(w.file(8, 0))
	if b, err := os.ReadFile("../perfdata/testdata/cpu-clock-z.data"); err == nil {
		f.Add(b) // perf record -z: compressed records
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := PerfDataPT(b)
		if err != nil && !errors.Is(err, ErrPerfData) {
			t.Fatalf("unwrapped error %v", err)
		}
		if err == nil && tr.TimeConv != nil {
			tr.TimeConv.ToNS(^uint64(0)) // must not panic
		}
		if err == nil {
			for _, s := range tr.Streams {
				if len(s.Data) > len(b) {
					t.Fatal("stream larger than input")
				}
			}
		}
		// the tolerant reader: no panic, and it accepts what PerfDataPT does
		tt, err2 := PerfDataPTTruncated(b)
		if err == nil && (err2 != nil || len(tt.Streams) != len(tr.Streams) || tt.Truncated != "") {
			t.Fatalf("PerfDataPTTruncated: %v, %d streams, %q; PerfDataPT: %d streams", err2, len(tt.Streams), tt.Truncated, len(tr.Streams))
		}
	})
}

// TestPerfDataCompressedGarbage: a compressed record that is not zstd is
// an error with its offset, never a panic.
func TestPerfDataCompressedGarbage(t *testing.T) {
	var w perfWriter
	w.record(perfdata.RecordCompressed, make([]byte, 16), nil)
	_, err := PerfDataPT(w.file(8, 0))
	if !errors.Is(err, ErrPerfData) || !bytes.Contains([]byte(err.Error()), []byte("zstd")) {
		t.Fatalf("compressed perf.data: %v", err)
	}
}
