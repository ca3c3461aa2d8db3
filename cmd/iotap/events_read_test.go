package main

import (
	"os"
	"strings"
	"testing"
)

// TestEventsRead decodes LinuxTracepoints' perf.data (file mode) and
// pipe.data (pipe mode): every sample printed, EventHeader events in
// perf-decode's JSON shape, exit 0; a file that is not perf.data is an
// error naming why.
func TestEventsRead(t *testing.T) {
	const dir = "../../userevents/testdata/linuxtracepoints/"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no " + dir)
	}
	for _, f := range []string{"perf.data", "pipe.data"} {
		out, errOut, code := runIotap(t, "events", "read", "--json", dir+f)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) < 500 || !strings.Contains(out, `{"n":"TestProviderC:CScalars3","Struct20":{"hi":"hi","ch10":["H","o","w"]}`) ||
			!strings.Contains(out, `{"name":"sched_switch","system":"sched",`) || !strings.Contains(errOut, "lost 0, undecodable 0") {
			t.Errorf("%s: exit %d, %d lines, stderr %s", f, code, len(lines), errOut)
		}
	}
	if _, errOut, code := runIotap(t, "events", "read", "events_read_test.go"); code != 1 || !strings.Contains(errOut, "not a perf.data file") {
		t.Errorf("not perf.data: exit %d, %s", code, errOut)
	}
}
