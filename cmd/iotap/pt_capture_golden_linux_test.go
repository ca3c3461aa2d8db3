//go:build linux

package main

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/iotap/iotap/intelpt"
)

// TestPTCaptureSidecarGolden pins the bytes of capture.json, the sidecar
// 'iotap pt capture' writes, for a capture with every field set: the
// schema must not change while it moves (issue 11).
func TestPTCaptureSidecarGolden(t *testing.T) {
	sc := ptSidecar{Tool: "iotap", Mode: "per-cpu", CPUs: []int{0, 2}, Command: []string{"./prog", "arg"},
		Chunks: 16, Order: 4, PMUType: 8, Config: [3]uint64{0x2001, 0, 0x3}, MTCFreq: 3,
		CPUID15EAX: 2, CPUID15EBX: 188, NomFreq: 36, SampleType: 0x10087, Filters: []string{"filter main @ /bin/prog"},
		Start: time.Date(2026, 11, 25, 12, 0, 0, 123456789, time.UTC), End: time.Date(2026, 11, 25, 12, 0, 1, 0, time.UTC),
		Buffers: []ptSidecarBuf{
			{CPU: 0, File: "cpu0.pt", Sideband: "cpu0.sideband", Bytes: 4096,
				Info: intelpt.BufferInfo{Size: 1 << 20, Head: 4096, Tail: 4096, CaptureEnd: 0, Full: true},
				SB:   intelpt.SidebandStats{Records: 5, ByType: map[string]int{"mmap2": 2, "aux": 3}, AuxRecords: 3, AuxBytes: 4096, Partial: 1, Lost: 2, ItraceStarts: 1}},
			{CPU: 2, File: "cpu2.pt", Sideband: "cpu2.sideband"},
		},
		Lost: true}
	j, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := string(j) + "\n"
	const path = "testdata/golden/pt-capture.json"
	if os.Getenv("IOTAP_UPDATE_GOLDEN") != "" {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("capture.json differs from %s:\n%s", path, lineDiff(string(want), got))
	}
}
