package intelpt

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func sampleCaptureInfo() *CaptureInfo {
	return &CaptureInfo{Tool: "iotap", Mode: "per-cpu", CPUs: []int{0, 2}, Command: []string{"./prog", "arg"},
		Chunks: 16, Order: 4, PMUType: 8, Config: [3]uint64{0x2001, 0, 0x3}, MTCFreq: 3,
		CPUID15EAX: 2, CPUID15EBX: 188, NomFreq: 36, SampleType: 0x10087, Filters: []string{"filter main @ /bin/prog"},
		Start: time.Date(2026, 11, 25, 12, 0, 0, 123456789, time.UTC), End: time.Date(2026, 11, 25, 12, 0, 1, 0, time.UTC),
		Buffers: []CaptureBuffer{
			{CPU: 0, File: "cpu0.pt", Sideband: "cpu0.sideband", Bytes: 4096,
				Info: BufferInfo{Size: 1 << 20, Head: 4096, Tail: 4096, CaptureEnd: 0, Full: true},
				SB:   SidebandStats{Records: 5, ByType: map[string]int{"mmap2": 2, "aux": 3}, AuxRecords: 3, AuxBytes: 4096, Partial: 1, Lost: 2, ItraceStarts: 1}},
			{CPU: 2, File: "cpu2.pt", Sideband: "cpu2.sideband"},
		},
		Lost: true}
}

// TestCaptureInfoGolden pins the bytes of capture.json as 'iotap pt
// capture' wrote them before the schema moved here (issue 11): the golden
// was produced by the command's own type.
func TestCaptureInfoGolden(t *testing.T) {
	var b bytes.Buffer
	if err := EncodeCaptureInfo(&b, sampleCaptureInfo()); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/capture.json.golden")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("capture.json:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestCaptureInfoRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ci := sampleCaptureInfo()
	ci.TSC = &TSCConversion{Zero: 1 << 40, Mult: 838860800, Shift: 31}
	if err := WriteCaptureInfo(dir, ci); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, CaptureInfoFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("capture.json: %v, mode %v", err, st.Mode())
	}
	got, buf, ok := CaptureInfoOf(filepath.Join(dir, "cpu2.pt"))
	if !ok || buf.CPU != 2 {
		t.Fatalf("CaptureInfoOf(cpu2.pt) = %v, %v", buf, ok)
	}
	if !reflect.DeepEqual(got, ci) {
		t.Errorf("read back %+v, want %+v", got, ci)
	}
	if _, _, ok := CaptureInfoOf(filepath.Join(dir, "other.pt")); ok {
		t.Error("a file that is not a buffer of the capture was taken")
	}
	if c := got.DecoderConfig(); c.MTCFreq != 3 || c.CPUID15EBX != 188 || c.NomFreq != 36 {
		t.Errorf("DecoderConfig = %+v", c)
	}
	// 1<<40 + 2^31 ticks * 0.390625 = 1<<40 + 838860800 ns.
	if ns := got.TSC.ToNS(1 << 31); ns != 1<<40+838860800 {
		t.Errorf("ToNS = %d", ns)
	}
	bad := `{"tool":"iotap","tsc":{"time_zero":0,"time_mult":1,"time_shift":64}}`
	if _, err := DecodeCaptureInfo(bytes.NewReader([]byte(bad))); err == nil {
		t.Error("time_shift 64 accepted")
	}
}

func TestBufferFileName(t *testing.T) {
	if BufferFileName(-1) != "thread" || BufferFileName(3) != "cpu3" {
		t.Error(BufferFileName(-1), BufferFileName(3))
	}
}
