//go:build linux

package intelpt

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/unix"
)

// TestTraceAttr checks the perf_event_attr built for the intel_pt events
// from the sysfs fixture and the trace configuration.
func TestTraceAttr(t *testing.T) {
	pmu, err := ReadPMU(os.DirFS("testdata/sysfs/intel_pt"))
	if err != nil {
		t.Fatal(err)
	}
	words, err := pmu.Config(Options{TSC: ptr(true), Branch: ptr(true), MTC: ptr(true), MTCPeriod: ptr(uint64(6))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		cfg      TraceConfig
		set, clr uint64
	}{
		{"both modes", TraceConfig{}, unix.PerfBitDisabled | unix.PerfBitSampleIDAll | unix.PerfBitMmap2 | unix.PerfBitContextSwitch | unix.PerfBitExcludeHv,
			unix.PerfBitExcludeUser | unix.PerfBitExcludeKernel | unix.PerfBitEnableOnExec},
		{"user only", TraceConfig{User: true}, unix.PerfBitExcludeKernel, unix.PerfBitExcludeUser},
		{"kernel only", TraceConfig{Kernel: true}, unix.PerfBitExcludeUser, unix.PerfBitExcludeKernel},
		{"command", TraceConfig{Mode: PerThread, PID: 42, EnableOnExec: true}, unix.PerfBitEnableOnExec | unix.PerfBitDisabled, 0},
	}
	for _, tt := range tests {
		tr := &Trace{cfg: tt.cfg, pmu: pmu, config: words}
		a := tr.attr()
		if a.Type != 8 || a.Size != unix.PerfAttrSize || a.Config != 1<<10|1<<13|1<<9|6<<14 || a.Ext1 != 0 || a.Ext2 != 0 {
			t.Errorf("%s: attr type %d size %d config %#x", tt.name, a.Type, a.Size, a.Config)
		}
		if a.Bits&tt.set != tt.set || a.Bits&tt.clr != 0 {
			t.Errorf("%s: bits %#x, want %#x set and %#x clear", tt.name, a.Bits, tt.set, tt.clr)
		}
		if a.Sample_type != unix.PerfSampleTID|unix.PerfSampleTime|unix.PerfSampleCPU || tr.SampleType() != a.Sample_type {
			t.Errorf("%s: sample_type %#x", tt.name, a.Sample_type)
		}
	}
	if got := pmu.MTCFreq(words[0]); got != 6 {
		t.Errorf("mtc freq %d", got)
	}
}

// TestCaptureNotSupportedHere runs the real probe: on a machine without the
// intel_pt PMU (this project's AMD machine, the QEMU lab) capture must fail
// with ErrNotSupported naming the CPU.
func TestCaptureNotSupportedHere(t *testing.T) {
	if _, err := os.Stat(PMUDir); err == nil {
		t.Skip("this machine has the intel_pt PMU")
	}
	_, err := NewTrace(TraceConfig{Chunks: 4, Order: 0})
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Intel PT needs an Intel CPU with the intel_pt PMU") {
		t.Fatalf("NewTrace: %v", err)
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	if _, desc := CPUDescription(cpuinfo); !strings.Contains(err.Error(), desc) {
		t.Fatalf("error %q does not name the CPU %q", err, desc)
	}
}
