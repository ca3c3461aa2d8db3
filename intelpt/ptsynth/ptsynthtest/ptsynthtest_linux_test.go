package ptsynthtest_test

import (
	"testing"

	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/intelpt/ptsynth/ptsynthtest"
)

// TestPerfData: the perf.data PerfData writes is the test program's run:
// read back, its calls are found (skipped without gcc).
func TestPerfData(t *testing.T) {
	_, path := ptsynthtest.PerfData(t, t.TempDir(), 256)
	in, err := calls.ReadPerfDataFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	res, err := calls.Analyze(in, calls.Options{})
	if err != nil || res.Stats.Calls == 0 {
		t.Errorf("%v, %d calls", err, res.Stats.Calls)
	}
}
