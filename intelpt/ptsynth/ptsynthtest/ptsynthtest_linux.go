package ptsynthtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/intelpt/ptsynth"
)

// Prog is ptsynth.SynthesizeProg(dir, psbPeriod) in a test: the test is
// skipped when gcc is not installed, and fails on any other error.
func Prog(t testing.TB, dir string, psbPeriod int) *ptsynth.Synthesized {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	s, err := ptsynth.SynthesizeProg(dir, psbPeriod)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// PerfData is Prog, its perf.data also written to DIR/perf.data (0600),
// whose path it returns.
func PerfData(t testing.TB, dir string, psbPeriod int) (*ptsynth.Synthesized, string) {
	t.Helper()
	s := Prog(t, dir, psbPeriod)
	path := filepath.Join(dir, "perf.data")
	if err := os.WriteFile(path, s.Perf, 0o600); err != nil {
		t.Fatal(err)
	}
	return s, path
}
