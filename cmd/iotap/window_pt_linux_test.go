//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt/ptsynth"
	"github.com/iotap/iotap/intelpt/ptsynth/ptsynthtest"
)

// writePTDir writes trace as the thread.pt of an 'iotap pt capture'
// directory of the synthesized run (sideband, the program's binaries).
func writePTDir(t *testing.T, dir string, s *ptsynth.Synthesized, trace []byte) string {
	t.Helper()
	p, err := ptsynth.WriteCaptureDir(dir, s, trace)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReaderWindowPT: --from/--to on pt dump, stats, flow and calls give
// what the same command gives of 'iotap cut' of the window (a directory
// like the capture holding the cut buffer), and the packets pt dump lists
// are libipt's packets of that cut (bench/ptpkt); an empty window lists
// the PSB and PSBEND of an empty stream; mark: is a usage error (PT has
// no markers).
func TestReaderWindowPT(t *testing.T) {
	dir := t.TempDir()
	s := ptsynthtest.Prog(t, dir, 48)
	capDir := filepath.Join(dir, "cap")
	trace := writePTDir(t, capDir, s, s.Enc.PT)
	first := s.Enc.TSC[0]
	span := s.Enc.TSC[len(s.Enc.TSC)-1] - first
	sec := func(ns uint64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 9, 64) }
	ptpkt := ""
	if _, err := os.Stat("/usr/include/intel-pt.h"); err == nil {
		ptpkt = filepath.Join(dir, "ptpkt")
		if out, err := exec.Command("gcc", "-O2", "-o", ptpkt, "../../bench/ptpkt/ptpkt.c", "-lipt").CombinedOutput(); err != nil {
			t.Fatalf("building ptpkt: %v\n%s", err, out)
		}
	}
	for _, w := range [][2]string{
		{sec(span / 4), "+" + sec(span/5)},
		{"", sec(span / 10)},
		{"@" + sec(first+span/2), ""},
		{sec(span + 1000), sec(span + 2000)}, // after the end: empty
	} {
		t.Run(w[0]+".."+w[1], func(t *testing.T) {
			var win []string
			if w[0] != "" {
				win = append(win, "--from", w[0])
			}
			if w[1] != "" {
				win = append(win, "--to", w[1])
			}
			cutDir := filepath.Join(t.TempDir(), "cap")
			cutTrace := writePTDir(t, cutDir, s, nil)
			if _, errs, code := runMMIO(t, append(append([]string{"cut"}, win...), trace, "-o", cutTrace)...); code != 0 {
				t.Fatalf("cut: exit %d: %s", code, errs)
			}
			for _, cmd := range [][]string{
				{"pt", "dump", "--time"},
				{"pt", "stats", "--json"},
				{"pt", "flow", "--time"},
				{"pt", "calls", "--json"},
			} {
				name := strings.Join(cmd[:2], " ")
				arg := trace
				if cmd[1] == "flow" || cmd[1] == "calls" {
					arg = capDir // the directory: its traces are cut
				}
				got, gerrs, gcode := runMMIO(t, append(append(append([]string{}, cmd...), win...), arg)...)
				carg := cutTrace
				if cmd[1] == "flow" || cmd[1] == "calls" {
					carg = cutDir
				}
				want, werrs, wcode := runMMIO(t, append(append([]string{}, cmd...), carg)...)
				if strings.Contains(got+gerrs, "iotap-window-") {
					t.Errorf("%s %v names the temporary cut, not the input: %s%s", name, win, got, gerrs)
				}
				got = strings.ReplaceAll(got, capDir, "DIR")
				want = strings.ReplaceAll(want, cutDir, "DIR")
				if gcode != wcode || got != want {
					t.Errorf("%s %v: exit %d, %d bytes (%s); of the cut: exit %d, %d bytes (%s)", name, win, gcode, len(got), gerrs, wcode, len(want), werrs)
				}
				t.Logf("%s: %d lines", name, strings.Count(got, "\n"))
				if gcode != 0 && !(cmd[1] == "calls" && gcode == 3) {
					t.Errorf("%s %v: exit %d: %s", name, win, gcode, gerrs)
				}
				if cmd[1] == "dump" && ptpkt != "" {
					out, err := exec.Command(ptpkt, "listoff", cutTrace).Output()
					if err != nil {
						t.Fatal(err)
					}
					lp := strings.Count(string(out), "\n") - 1 // the last line says where it ended
					dp := 0
					for _, l := range strings.Split(got, "\n") {
						if len(l) > 16 && l[0] != ' ' {
							dp++
						}
					}
					if lp != dp || lp < 2 {
						t.Errorf("pt dump %v: %d packets, libipt %d in the cut", win, dp, lp)
					}
				}
			}
		})
	}
	// perf.data: the readers read the cut perf.data (cut.CutPerfDataPT)
	perf := filepath.Join(dir, "perf.data")
	if err := os.WriteFile(perf, s.Perf, 0o600); err != nil {
		t.Fatal(err)
	}
	win := []string{"--from", sec(span / 4), "--to", "+" + sec(span/5)}
	cutPerf := filepath.Join(dir, "cut.data")
	if _, errs, code := runMMIO(t, append(append([]string{"cut"}, win...), perf, "-o", cutPerf)...); code != 0 {
		t.Fatalf("cut perf.data: exit %d: %s", code, errs)
	}
	for _, cmd := range [][]string{{"pt", "calls", "--json"}, {"pt", "dump"}, {"pt", "flow"}} {
		got, gerrs, gcode := runMMIO(t, append(append(append([]string{}, cmd...), win...), perf)...)
		want, werrs, wcode := runMMIO(t, append(append([]string{}, cmd...), cutPerf)...)
		if strings.Contains(got+gerrs, "iotap-window-") {
			t.Errorf("%v names the temporary cut, not the input: %s", cmd, gerrs)
		}
		got = strings.ReplaceAll(got, perf, cutPerf)
		if gcode != wcode || got != want || strings.Count(got, "\n") < 10 {
			t.Errorf("%v of perf.data: exit %d, %d bytes (%s); of its cut: exit %d, %d bytes (%s)", cmd, gcode, len(got), gerrs, wcode, len(want), werrs)
		}
	}
	if _, errs, code := runMMIO(t, "pt", "dump", "--from", "mark:x", trace); code != 2 || !strings.Contains(errs, "no markers") {
		t.Errorf("pt dump --from mark:x: exit %d: %s", code, errs)
	}
}
