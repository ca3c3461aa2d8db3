package intelpt_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestConfigOf: the timing parameters of capture.json belong to the
// buffers it lists, not to other files of the directory, nor to stdin,
// nor to a capture.json another tool wrote.
func TestConfigOf(t *testing.T) {
	dir := t.TempDir()
	sc := `{"tool":"iotap","mtc_freq":3,"nom_freq":4,"cpuid_0x15_eax":1,"cpuid_0x15_ebx":2,"buffers":[{"file":"cpu0.pt"}]}`
	os.WriteFile(filepath.Join(dir, intelpt.CaptureInfoFile), []byte(sc), 0o600)
	cfg, ok := intelpt.ConfigOf(filepath.Join(dir, "cpu0.pt"))
	if want := (intelpt.Config{MTCFreq: 3, NomFreq: 4, CPUID15EAX: 1, CPUID15EBX: 2}); !ok || cfg != want {
		t.Errorf("buffer: %+v %v, want %+v", cfg, ok, want)
	}
	for _, p := range []string{filepath.Join(dir, "cpu1.pt"), "-", filepath.Join(t.TempDir(), "cpu0.pt")} {
		if cfg, ok := intelpt.ConfigOf(p); ok || cfg != (intelpt.Config{}) {
			t.Errorf("%s: %+v %v", p, cfg, ok)
		}
	}
	os.WriteFile(filepath.Join(dir, intelpt.CaptureInfoFile), []byte(`{"tool":"other","mtc_freq":3,"buffers":[{"file":"cpu0.pt"}]}`), 0o600)
	if _, ok := intelpt.ConfigOf(filepath.Join(dir, "cpu0.pt")); ok {
		t.Errorf("another tool's capture.json used")
	}
}

// The MTC frequency and CPUID 0x15 ratio a capture recorded, for
// decoding one of its buffer files with time.
func ExampleConfigOf() {
	dir, err := os.MkdirTemp("", "ptcap")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	sc := `{"tool":"iotap","mtc_freq":3,"cpuid_0x15_eax":1,"cpuid_0x15_ebx":2,"buffers":[{"file":"cpu0.pt"}]}`
	if err := os.WriteFile(filepath.Join(dir, intelpt.CaptureInfoFile), []byte(sc), 0o600); err != nil {
		panic(err)
	}
	cfg, ok := intelpt.ConfigOf(filepath.Join(dir, "cpu0.pt"))
	fmt.Println(ok, cfg.MTCFreq, cfg.CPUID15EAX, cfg.CPUID15EBX)
	// Output: true 3 1 2
}

// TestTimingApply: each parameter given replaces the recorded one, zero
// included; those not given keep it; errata and the rest are kept.
func TestTimingApply(t *testing.T) {
	base := intelpt.Config{MTCFreq: 3, NomFreq: 4, CPUID15EAX: 2, CPUID15EBX: 168, IgnoreBlocks: true, Errata: intelpt.Errata{BDM70: true}}
	if got := (&intelpt.Timing{}).Apply(base); got != base {
		t.Errorf("nothing given: %+v", got)
	}
	zero, nine, one := uint8(0), uint8(9), uint32(1)
	got := (&intelpt.Timing{MTCFreq: &zero, NomFreq: &nine, CPUID15EBX: &one}).Apply(base)
	want := intelpt.Config{MTCFreq: 0, NomFreq: 9, CPUID15EAX: 2, CPUID15EBX: 1, IgnoreBlocks: true, Errata: intelpt.Errata{BDM70: true}}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
