package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventsRead decodes LinuxTracepoints' perf.data (file mode) and
// pipe.data (pipe mode): every sample printed, EventHeader events in
// NDJSON schema 1 (user_event records after the input record, their
// fields formatted as perf-decode formats them), exit 0; a file that is
// not perf.data is an error naming why.
func TestEventsRead(t *testing.T) {
	const dir = "../../userevents/testdata/linuxtracepoints/"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no " + dir)
	}
	for _, f := range []string{"perf.data", "pipe.data"} {
		out, errOut, code := runIotap(t, "events", "read", "--json", dir+f)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) < 500 || !strings.HasPrefix(lines[0], `{"kind":"input","schema":1,"source":"events","file":"`+dir+f+`","format":"perf.data","clock":"perf"}`) ||
			!strings.Contains(out, `"system":"user_events","name":"TestProviderC:CScalars3","fields":{"Struct20":{"hi":"hi","ch10":["H","o","w"]}`) ||
			!strings.Contains(out, `"system":"sched","name":"sched_switch","fields":{"prev_comm":`) || !strings.Contains(errOut, "lost 0, undecodable 0") {
			t.Errorf("%s: exit %d, %d lines, stderr %s", f, code, len(lines), errOut)
		}
	}
	if _, errOut, code := runIotap(t, "events", "read", "events_read_test.go"); code != 1 || !strings.Contains(errOut, "not a perf.data file") {
		t.Errorf("not perf.data: exit %d, %s", code, errOut)
	}
}

// TestEventsReadWindowErrors: a window that does not resolve on the file
// (no marker of that name) is a usage error naming the file once, as
// mmio read's is (it named no file); a file that cannot be read with a
// window is exit 1 as without one (it was a usage error, exit 2).
func TestEventsReadWindowErrors(t *testing.T) {
	path := "../../userevents/testdata/linuxtracepoints/perf.data"
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	_, errOut, code := runIotap(t, "events", "read", "--from", "mark:x", path)
	if want := "iotap: events read: " + path + ": --from: mark:x: no marker of that name in the trace\n"; code != 2 || errOut != want {
		t.Errorf("mark:x: exit %d, stderr %q, want 2, %q", code, errOut, want)
	}
	missing := filepath.Join(t.TempDir(), "missing.data")
	_, errOut, code = runIotap(t, "events", "read", "--from", "1", missing)
	if code != 1 || strings.Count(errOut, missing) != 1 {
		t.Errorf("missing file with --from: exit %d, stderr %q, want 1 naming it once", code, errOut)
	}
}
