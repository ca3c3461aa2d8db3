package main

import (
	"testing"
)

// TestMMIOReadWorkers: 'mmio read' gives the same bytes, exit code and
// messages whether the log is parsed by one goroutine or several, in
// every output form (the parallel path is mmiotrace.ConvertLog, tested
// against the Reader there; this checks the wiring).
func TestMMIOReadWorkers(t *testing.T) {
	for _, args := range [][]string{
		{"mmio", "read"},
		{"mmio", "read", "--json"},
		{"mmio", "read", "--json", "--keep-going=false"},
	} {
		one, oneErr, oneCode := runMMIO(t, append(append(args[:len(args):len(args)], "--workers", "1"), mmioGolden)...)
		for _, w := range []string{"2", "3"} {
			out, errOut, code := runMMIO(t, append(append(args[:len(args):len(args)], "--workers", w), mmioGolden)...)
			if out != one || errOut != oneErr || code != oneCode {
				t.Fatalf("%v --workers %s: exit %d, %d bytes, stderr %q; with one worker exit %d, %d bytes, stderr %q",
					args, w, code, len(out), errOut, oneCode, len(one), oneErr)
			}
		}
		if len(one) == 0 || oneCode != 0 {
			t.Fatalf("%v: exit %d, %d bytes: %s", args, oneCode, len(one), oneErr)
		}
	}
}
