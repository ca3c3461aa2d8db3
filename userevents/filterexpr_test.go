package userevents

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// recordSched records fork and exit tracepoints of 8 processes with perf
// (skipping when perf cannot trace here) and returns the perf.data path.
func recordSched(t *testing.T) (perf, data string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs perf record")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed (apt-get install linux-perf)")
	}
	data = filepath.Join(t.TempDir(), "perf.data")
	rec := exec.Command(perf, "record", "-q", "-e", "sched:sched_process_fork", "-e", "sched:sched_process_exit", "-a", "-o", data,
		"--", "sh", "-c", "for i in 1 2 3 4 5 6 7 8; do /bin/true; done")
	if out, err := rec.CombinedOutput(); err != nil {
		t.Skipf("perf record cannot trace here (%v): %s", err, out)
	}
	return perf, data
}

// perfScript returns the lines of perf script -F tid,cpu,time,event,trace
// with their blanks collapsed.
func perfScript(t *testing.T, perf, data string) []string {
	t.Helper()
	script, err := exec.Command(perf, "script", "-i", data, "-F", "tid,cpu,time,event,trace").Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(script)), "\n") {
		want = append(want, strings.Join(strings.Fields(l), " "))
	}
	return want
}

// readSamples returns the samples of a perf.data file that keep selects,
// each as perf script prints it (fork and exit only).
func readSamples(t *testing.T, data string, keep func(*Recorded) bool) []string {
	t.Helper()
	var got []string
	eachSample(t, data, func(ev *Recorded) {
		if keep(ev) {
			got = append(got, schedScriptLine(ev))
		}
	})
	return got
}

// TestFilterAgreesWithGawk: on a perf.data of sched fork/exit
// tracepoints, the samples an expression selects are the lines of perf
// script that gawk's condition selects (perf decodes, gawk filters).
func TestFilterAgreesWithGawk(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk not installed")
	}
	perf, data := recordSched(t)
	script := strings.Join(perfScript(t, perf, data), "\n") + "\n"
	// field(k) is the value of "k=" in perf script's trace text.
	const fn = `function field(k,   m) { return match($0, " " k "=([^ ]*)", m) ? m[1] : "" } `
	cases := []struct{ ours, awk string }{
		{`event.name == "sched_process_exit"`, `$4 == "sched:sched_process_exit:"`},
		{`event.system == "sched" && event.name != "sched_process_exit"`, `$4 == "sched:sched_process_fork:"`},
		{`event.comm == "true" && event.prio >= 100`, `field("comm") == "true" && field("prio") != "" && field("prio") + 0 >= 100`},
		{`event.child_comm contains "s" || event.child_pid < 0`, `field("child_comm") ~ /s/`},
		{`event.common_pid > 0 && event.name == "sched_process_exit" && !(event.comm == "sh")`, `$4 == "sched:sched_process_exit:" && field("comm") != "sh"`},
		{`event.parent_pid`, `$4 == "sched:sched_process_fork:"`},
		{`event.pid == event.common_pid`, `$4 == "sched:sched_process_exit:" && field("pid") == $1`},
	}
	for _, c := range cases {
		cmd := exec.Command(gawk, fn+c.awk+" { print }")
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gawk %s: %v", c.awk, err)
		}
		want := strings.Fields(strings.ReplaceAll(string(out), " ", "_"))
		keep, err := ParseFilter(c.ours)
		if err != nil {
			t.Fatalf("%s: %v", c.ours, err)
		}
		got := readSamples(t, data, keep)
		for i := range got {
			got[i] = strings.ReplaceAll(got[i], " ", "_")
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d samples, gawk's %s: %d\nours: %v\ngawk: %v", c.ours, len(got), c.awk, len(want), got, want)
		} else if len(want) == 0 || len(want) == strings.Count(script, "\n") {
			t.Errorf("%s selects %d of %d: the case tests nothing", c.ours, len(want), strings.Count(script, "\n"))
		}
	}
	if _, err := ParseFilter(`event.nosuch == 1 && vent.name == "x"`); err == nil || !strings.Contains(err.Error(), `unknown field "vent.name"`) {
		t.Errorf("unknown field: %v", err)
	}
}
