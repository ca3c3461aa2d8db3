package intelpt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in     string
		word   int
		ranges [][2]int
		bad    bool
	}{
		{in: "config:0-7", ranges: [][2]int{{0, 7}}},
		{in: "config:14-17\n", ranges: [][2]int{{14, 17}}},
		{in: "config:10", ranges: [][2]int{{10, 10}}},
		{in: "config1:0-3,8-11", word: 1, ranges: [][2]int{{0, 3}, {8, 11}}},
		{in: "config2:63", word: 2, ranges: [][2]int{{63, 63}}},
		{in: "config3:1", bad: true},
		{in: "config:", bad: true},
		{in: "config:7-3", bad: true},
		{in: "config:64", bad: true},
	}
	for _, tt := range tests {
		f, err := ParseFormat(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("%q: no error", tt.in)
			}
			continue
		}
		if err != nil || f.Word != tt.word || len(f.Ranges) != len(tt.ranges) {
			t.Errorf("%q: %+v %v", tt.in, f, err)
			continue
		}
		for i := range tt.ranges {
			if f.Ranges[i] != tt.ranges[i] {
				t.Errorf("%q: ranges %v", tt.in, f.Ranges)
			}
		}
	}
	// A split field stores its low bits in the first range.
	f, _ := ParseFormat("config1:0-3,8-11")
	var w [3]uint64
	if err := f.Put(&w, 0xab); err != nil || w[1] != 0xa0b {
		t.Fatalf("split put: %#x %v", w[1], err)
	}
	if err := f.Put(&w, 0x100); err == nil {
		t.Fatal("value wider than the field accepted")
	}
}

func fixturePMU(t *testing.T) *PMU {
	t.Helper()
	p, err := ReadPMU(os.DirFS("testdata/sysfs/intel_pt"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ptr[T any](v T) *T { return &v }

func TestPMUConfig(t *testing.T) {
	p := fixturePMU(t)
	if p.Type != 8 || p.Caps["mtc_periods"] != 0x249 || p.Caps["num_address_ranges"] != 2 {
		t.Fatalf("pmu %+v", p)
	}
	w, err := p.Config(Options{TSC: ptr(true), Branch: ptr(true), MTC: ptr(true), CYC: ptr(true),
		MTCPeriod: ptr(uint64(3)), PSBPeriod: ptr(uint64(2)), CycThresh: ptr(uint64(1)), NoRetComp: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	// tsc config:10, branch :13, mtc :9, cyc :1, noretcomp :11,
	// mtc_period :14-17, psb_period :24-27, cyc_thresh :19-22.
	want := uint64(1<<10 | 1<<13 | 1<<9 | 1<<1 | 1<<11 | 3<<14 | 2<<24 | 1<<19)
	if w[0] != want || w[1] != 0 || w[2] != 0 {
		t.Fatalf("config %#x, want %#x", w[0], want)
	}
	if p.MTCFreq(w[0]) != 3 {
		t.Fatalf("mtc freq %d", p.MTCFreq(w[0]))
	}
	// branch=0 clears the bit.
	if w, _ := p.Config(Options{Branch: ptr(false), TSC: ptr(true)}); w[0] != 1<<10 {
		t.Fatalf("branch off: %#x", w[0])
	}
	bad := []struct {
		name string
		opts Options
		msg  string
	}{
		{"ptwrite cap", Options{PTW: ptr(true)}, "caps/ptwrite"},
		{"power events cap", Options{PwrEvt: ptr(true)}, "caps/power_event_trace"},
		{"mtc period", Options{MTCPeriod: ptr(uint64(2))}, "valid values are [0 3 6 9]"},
		{"psb period", Options{PSBPeriod: ptr(uint64(7))}, "caps/psb_periods"},
	}
	for _, b := range bad {
		_, err := p.Config(b.opts)
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%s: %v", b.name, err)
		}
	}
	// ptw=0 needs no capability.
	if _, err := p.Config(Options{PTW: ptr(false)}); err != nil {
		t.Errorf("ptw=0: %v", err)
	}
	// A kernel without a format reports it.
	delete(p.Format, "cyc")
	if _, err := p.Config(Options{CYC: ptr(true)}); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "format/cyc") {
		t.Errorf("missing format: %v", err)
	}
}

func TestCheckSupport(t *testing.T) {
	amd := []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel name\t: AMD EPYC 7B13\n")
	_, err := checkSupport(nil, amd)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Intel PT needs an Intel CPU with the intel_pt PMU: this is AuthenticAMD AMD EPYC 7B13") {
		t.Fatalf("amd: %v", err)
	}
	intel := []byte("vendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Core(TM) i7\n")
	if _, err := checkSupport(nil, intel); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), PMUDir) {
		t.Fatalf("intel without pmu: %v", err)
	}
	pmu, err := checkSupport(os.DirFS("testdata/sysfs/intel_pt"), intel)
	if err != nil || pmu.Type != 8 {
		t.Fatalf("intel with pmu: %v", err)
	}
	noTopa := fstest.MapFS{
		"type":                     {Data: []byte("9\n")},
		"format/tsc":               {Data: []byte("config:10\n")},
		"caps/topa_output":         {Data: []byte("0\n")},
		"caps/single_range_output": {Data: []byte("0\n")},
	}
	if _, err := checkSupport(noTopa, intel); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("no output scheme: %v", err)
	}
}

// fakeAux simulates the CPU writing a byte sequence into an AUX ring.
type fakeAux struct {
	ring       []byte
	head, tail uint64
	circular   bool
	next       byte
}

// write writes n bytes like the hardware: in stop-on-full mode it stops
// when the ring is full and returns how much it wrote.
func (f *fakeAux) write(n int) int {
	size := uint64(len(f.ring))
	for i := 0; i < n; i++ {
		if !f.circular && f.head-f.tail == size {
			return i
		}
		f.ring[f.head%size] = f.next
		f.next++
		f.head++
	}
	return n
}

func seq(from byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = from + byte(i)
	}
	return b
}

func TestAuxRingCircular(t *testing.T) {
	f := &fakeAux{ring: make([]byte, 64), circular: true}
	f.write(40)
	got, _ := auxData(nil, f.ring, f.head, f.tail, true)
	if !bytes.Equal(got, seq(0, 40)) {
		t.Fatalf("before wrap: %v", got)
	}
	if bi := ringInfo(64, f.head, f.tail, true); bi.CaptureEnd != 40 || bi.Wrapped {
		t.Fatalf("info before wrap: %+v", bi)
	}
	f.write(100) // 140 bytes written: the ring holds bytes 76..139
	got, _ = auxData(nil, f.ring, f.head, f.tail, true)
	if !bytes.Equal(got, seq(76, 64)) {
		t.Fatalf("after wrap: %v", got)
	}
	if bi := ringInfo(64, f.head, f.tail, true); bi.CaptureEnd != 140%64 || !bi.Wrapped {
		t.Fatalf("info after wrap: %+v", bi)
	}
	f = &fakeAux{ring: make([]byte, 64), circular: true}
	f.write(64)
	if bi := ringInfo(64, f.head, 0, true); bi.CaptureEnd != 64 || bi.Wrapped {
		t.Fatalf("exactly full: %+v", bi)
	}
}

func TestAuxRingStopOnFull(t *testing.T) {
	f := &fakeAux{ring: make([]byte, 64)}
	var out []byte
	var err error
	for round := 0; round < 5; round++ {
		f.write(50)
		if bi := ringInfo(64, f.head, f.tail, false); bi.Full != (f.head-f.tail == 64) {
			t.Fatalf("round %d: full flag %+v", round, bi)
		}
		// Drain: copy [tail, head) and release it.
		if out, err = auxData(out, f.ring, f.head, f.tail, false); err != nil {
			t.Fatal(err)
		}
		f.tail = f.head
	}
	if !bytes.Equal(out, seq(0, 250)) {
		t.Fatalf("drained %d bytes, not the written sequence", len(out))
	}
	// Without draining, the writer stops when the ring is full.
	if n := f.write(100); n != 64 {
		t.Fatalf("wrote %d bytes into an empty 64-byte ring", n)
	}
	bi := ringInfo(64, f.head, f.tail, false)
	if !bi.Full || bi.CaptureEnd != 64 {
		t.Fatalf("full ring: %+v", bi)
	}
	if _, err := ringCopy(nil, f.ring, 10, 100); err == nil {
		t.Fatal("span larger than the ring accepted")
	}
}

func TestParseSideband(t *testing.T) {
	rec := func(typ uint32, body []byte) []byte {
		h := make([]byte, 8)
		binary.LittleEndian.PutUint32(h, typ)
		binary.LittleEndian.PutUint16(h[6:], uint16(8+len(body)))
		return append(h, body...)
	}
	aux := func(size, flags uint64) []byte {
		b := make([]byte, 24)
		binary.LittleEndian.PutUint64(b[8:], size)
		binary.LittleEndian.PutUint64(b[16:], flags)
		return rec(perfRecordAux, b)
	}
	lost := make([]byte, 16)
	binary.LittleEndian.PutUint64(lost[8:], 5)
	var b []byte
	b = append(b, rec(perfRecordItraceStart, make([]byte, 8))...)
	b = append(b, rec(10, make([]byte, 64))...)
	b = append(b, aux(4096, 0)...)
	b = append(b, aux(100, AuxFlagTruncated)...)
	b = append(b, aux(50, AuxFlagPartial|AuxFlagCollision)...)
	b = append(b, rec(perfRecordLost, lost)...)
	var s SidebandStats
	parseSideband(b, &s)
	if s.Records != 6 || s.ItraceStarts != 1 || s.ByType["mmap2"] != 1 || s.AuxRecords != 3 || s.AuxBytes != 4246 ||
		s.Truncated != 1 || s.Partial != 1 || s.Collision != 1 || s.Lost != 5 || !s.Lossy() {
		t.Fatalf("stats %+v", s)
	}
	var bad SidebandStats
	parseSideband(append(b, 1, 2, 3), &bad)
	if bad.BadRecords != 1 {
		t.Fatalf("trailing garbage: %+v", bad)
	}
}

func TestTraceConfigValidate(t *testing.T) {
	if _, err := (&TraceConfig{Chunks: 3, Order: 1}).validate(4096); err == nil {
		t.Error("6 pages accepted")
	}
	if n, err := (&TraceConfig{Chunks: 4, Order: 2}).validate(4096); err != nil || n != 16*4096 {
		t.Errorf("4 chunks of 4 pages: %d %v", n, err)
	}
	if _, err := (&TraceConfig{Chunks: 1, Mode: PerThread}).validate(4096); err == nil {
		t.Error("per-thread without pid accepted")
	}
	if _, err := (&TraceConfig{Chunks: 1, AddrFilters: []string{"filter 1\nx"}}).validate(4096); err == nil {
		t.Error("filter with newline accepted")
	}
}
