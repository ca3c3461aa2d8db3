package userevents

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPerfDataPidZero: a sample of pid 0 and tid 0 (the idle task, the
// kernel) has "pid":0 in the NDJSON, not null, as perf script reads the
// same samples (0/0). The samples are perf record's, of a process whose
// pid is then overwritten with 0 throughout the data section.
func TestPerfDataPidZero(t *testing.T) {
	if testing.Short() {
		t.Skip("runs perf record")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed (apt-get install linux-perf)")
	}
	data := filepath.Join(t.TempDir(), "perf.data")
	if out, err := exec.Command(perf, "record", "-q", "-e", "sched:sched_process_exec", "-o", data, "--", "/bin/true").CombinedOutput(); err != nil {
		t.Skipf("perf record cannot trace here (%v): %s", err, out)
	}
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, b)
	if len(recs) != 1 || !recs[0].HasProcess || recs[0].Process == 0 {
		t.Fatalf("perf record of one exec: %d samples %+v", len(recs), recs)
	}
	pid := binary.LittleEndian.AppendUint32(nil, uint32(recs[0].Process))
	dOff, dSize := leU64(b[40:]), leU64(b[48:])
	sec := b[dOff : dOff+dSize]
	if bytes.Count(sec, pid) < 3 { // the sample's pid, tid and common_pid
		t.Fatalf("pid %d found %d times in the data section", recs[0].Process, bytes.Count(sec, pid))
	}
	copy(sec, bytes.ReplaceAll(sec, pid, make([]byte, 4)))
	if err := os.WriteFile(data, b, 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := exec.Command(perf, "script", "-i", data, "-F", "pid,tid,event").Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	if f := strings.Fields(string(script)); len(f) < 2 || f[0] != "0/0" {
		t.Fatalf("perf script reads %q, want pid/tid 0/0", script)
	}
	recs = readAll(t, b)
	if len(recs) != 1 {
		t.Fatalf("%d samples after the pid was zeroed", len(recs))
	}
	var got struct{ Pid, Tid *int }
	if err := json.Unmarshal(AppendNDJSON(nil, &recs[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.Pid == nil || *got.Pid != 0 || got.Tid == nil || *got.Tid != 0 {
		t.Errorf("NDJSON %s: want pid 0 and tid 0, as perf script reads them", AppendNDJSON(nil, &recs[0]))
	}
}

// readAll reads every tracepoint sample of a perf.data file.
func readAll(t *testing.T, b []byte) []Recorded {
	t.Helper()
	r, err := NewPerfDataReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []Recorded
	for {
		var rec Recorded
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}
