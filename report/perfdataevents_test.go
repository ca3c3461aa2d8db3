package report

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// TestReportUserEventsPerfData: report reads a perf.data of tracepoints
// (the LinuxTracepoints recording) as user_events, as 'iotap events read'
// and export read it (detect.Recognise): as many events, and of
// sched:sched_switch, as LinuxTracepoints' own decoder (perf-decode,
// perf.data.linux.json) lists, nothing lost; it was taken for Intel PT
// ("perf.data holds no PT data"). An Intel PT perf.data is still PT.
func TestReportUserEventsPerfData(t *testing.T) {
	const perf = "../userevents/testdata/linuxtracepoints/perf.data"
	const pt = "../intelpt/testdata/libipt/two-cpus.perf.data"
	oracle, err := os.ReadFile(perf + ".linux.json")
	if err != nil {
		t.Fatal(err)
	}
	wantAll, wantSwitch := bytes.Count(oracle, []byte(`"n":`)), bytes.Count(oracle, []byte(`"n":"sched:sched_switch"`))
	r, err := Build(context.Background(), []string{perf, pt}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Traces) != 2 {
		t.Fatalf("%d traces, want 2", len(r.Traces))
	}
	for _, tr := range r.Traces {
		switch tr.Path {
		case pt:
			if tr.Kind != (Kind{"pt", "perf.data"}) {
				t.Errorf("%s: %v, want pt perf.data", pt, tr.Kind)
			}
		case perf:
			if tr.Kind != (Kind{"events", "perf.data"}) || tr.Err != nil || tr.Events == nil || tr.Loss != "" {
				t.Fatalf("%s: %v, error %v, loss %q, events %v; want events perf.data", perf, tr.Kind, tr.Err, tr.Loss, tr.Events)
			}
			switches := int64(0)
			for _, e := range tr.Events.ByName {
				if e.Name == "sched_switch" {
					switches = e.Count
				}
			}
			if tr.Events.Total != int64(wantAll) || switches != int64(wantSwitch) {
				t.Errorf("%s: %d events, %d sched_switch; perf-decode lists %d, %d", perf, tr.Events.Total, switches, wantAll, wantSwitch)
			}
		default:
			t.Errorf("trace %s", tr.Path)
		}
	}
}
