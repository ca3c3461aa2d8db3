package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestExportUserEventsPerfData: a perf.data of tracepoints (the
// LinuxTracepoints recording) is exported as user_events, alone and given
// after another input alike, one row per event that LinuxTracepoints'
// own decoder (perf-decode, perf.data.linux.json) lists; it was taken for
// Intel PT ("perf.data holds no PT data") after the earlier input's
// tables were written.
func TestExportUserEventsPerfData(t *testing.T) {
	const perf = "../userevents/testdata/linuxtracepoints/perf.data"
	oracle, err := os.ReadFile(perf + ".linux.json")
	if err != nil {
		t.Fatal(err)
	}
	wantAll, wantSwitch := bytes.Count(oracle, []byte(`"n":`)), bytes.Count(oracle, []byte(`"n":"sched:sched_switch"`))
	for _, paths := range [][]string{{perf}, {"../testdata/usbmon/lab-0u.txt", perf}} {
		x, err := New(Options{Dir: filepath.Join(t.TempDir(), "out")})
		if err != nil {
			t.Fatal(err)
		}
		var rows []CaptureRow
		lost, err := x.ExportAll(context.Background(), paths, func(r CaptureRow) { rows = append(rows, r) })
		if err != nil || len(lost) != 0 || len(rows) != len(paths) {
			t.Fatalf("%q: %v, lost %q, %d rows", paths, err, lost, len(rows))
		}
		if r := rows[len(rows)-1]; r.Source != "events" || r.Format != "perf.data" || r.ClockDomain != "perf" || r.Records != int64(wantAll) || !r.Complete {
			t.Errorf("%q: captures row %s (complete %v), want events perf.data, %d records", paths, r, r.Complete, wantAll)
		}
		var table string
		for _, f := range x.Files() {
			if filepath.Base(filepath.Dir(f)) == TableUserEvents {
				table = f
			}
		}
		b, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := readAll[UserEventRow](t, b)
		switches := 0
		for _, e := range got {
			if e.System == "sched" && e.Name == "sched_switch" {
				switches++
			}
		}
		if len(got) != wantAll || switches != wantSwitch {
			t.Errorf("%q: %d user_events rows, %d sched_switch; perf-decode lists %d, %d", paths, len(got), switches, wantAll, wantSwitch)
		}
	}
}

// TestExportAllDetectsFirst: an input that is not exported, given after
// one that is, is an error before any table is written (the first
// input's were written, then the error came).
func TestExportAllDetectsFirst(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	x, err := New(Options{Dir: out})
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.ExportAll(context.Background(), []string{"../testdata/usbmon/lab-0u.txt", "../testdata/usbmon/README.md"}, nil)
	if err == nil {
		t.Fatal("README.md exported")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 || len(x.Files()) != 0 {
		t.Errorf("%v: %d entries in the output directory, %d files, want none", err, len(ents), len(x.Files()))
	}
}
