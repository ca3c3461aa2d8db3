//go:build linux

package ptsynth

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/symtab"
)

// ProgSource is the C source of the calls test program.
func ProgSource() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "intelpt", "testdata", "calls", "prog.c")
}

// BuildProg compiles the calls test program as a PIE linked against libc
// into dir (gcc must be installed).
func BuildProg(dir string) (string, error) {
	return BuildProgAs(dir, "prog", "-O1")
}

// BuildProgAs compiles the calls test program into dir/name with the
// optimization flag opt ("-O0": other code for the same source).
func BuildProgAs(dir, name, opt string) (string, error) {
	out := filepath.Join(dir, name)
	b, err := exec.Command("gcc", "-fPIE", "-pie", opt, "-foptimize-sibling-calls", "-fno-inline", "-fno-builtin",
		"-o", out, ProgSource()).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("gcc: %v: %s", err, b)
	}
	return out, nil
}

// AtSymbol returns a start function for Record: the run-time address of
// the function name of the program at path.
func AtSymbol(path, name string) func(int, []Map) (uint64, error) {
	return func(pid int, maps []Map) (uint64, error) {
		tab, err := symtab.Open(path, symtab.Options{})
		if err != nil {
			return 0, err
		}
		var link uint64
		for _, s := range tab.Symbols() {
			if s.Name == name {
				link = s.Addr
			}
		}
		if link == 0 {
			return 0, fmt.Errorf("ptsynth: no %s in %s", name, path)
		}
		for _, m := range maps {
			if m.Path != path {
				continue
			}
			if a, ok := tab.RunAddr(m.Start, m.Off, m.End-m.Start, link); ok {
				return a, nil
			}
		}
		return 0, fmt.Errorf("ptsynth: %s of %s is not mapped", name, path)
	}
}

// Synthesized is a recorded run of the test program with its trace.
type Synthesized struct {
	Prog string
	Run  *Run
	Enc  *Encoded
	Perf []byte
}

// SynthesizeProg builds the test program into dir, records it from main
// and encodes its trace (PSB+ every psbPeriod bytes) into a perf.data.
func SynthesizeProg(dir string, psbPeriod int) (*Synthesized, error) {
	s := &Synthesized{}
	var err error
	if s.Prog, err = BuildProg(dir); err != nil {
		return nil, err
	}
	if s.Run, err = Record(s.Prog, nil, AtSymbol(s.Prog, "main"), 0); err != nil {
		return nil, err
	}
	if s.Enc, err = Encode(s.Run, X86, Options{PSBPeriod: psbPeriod}); err != nil {
		return nil, err
	}
	s.Perf = PerfData(s.Run, s.Enc, PerfOptions{PerThread: true})
	return s, nil
}

// WriteCaptureDir writes trace (the run's PT, or a cut of it) as the
// thread.pt of an 'iotap pt capture' directory of the run in dir, with
// its sideband, capture.json and the binaries it mapped, so that the flow
// and calls decoders find the program's code; it returns the trace's path.
func WriteCaptureDir(dir string, s *Synthesized, trace []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	raw := Sideband(s.Run, s.Enc)
	ci := &intelpt.CaptureInfo{Tool: "iotap", Mode: "per-thread", PID: s.Run.PID, SampleType: SampleType,
		Buffers: []intelpt.CaptureBuffer{{CPU: -1, File: "thread.pt", Sideband: "thread.sideband"}}}
	if err := intelpt.WriteCaptureInfo(dir, ci); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "thread.pt")
	if err := os.WriteFile(path, trace, 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "thread.sideband"), raw, 0o600); err != nil {
		return "", err
	}
	files := intelpt.MappedFiles(intelpt.RawSideband(raw, SampleType, true))
	if err := intelpt.CopyBinaries(dir, files); err != nil {
		return "", err
	}
	if err := intelpt.WriteMappedFiles(dir, files); err != nil {
		return "", err
	}
	return path, nil
}
