package timeline

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// TestOpenUserEventsPerfData: timeline reads a perf.data of tracepoints
// (the LinuxTracepoints recording) as user_events, as 'iotap events read'
// and export read it (detect.Recognise): one source whose records are as
// many, and of sched:sched_switch, as LinuxTracepoints' own decoder
// (perf-decode, perf.data.linux.json) lists, nothing lost; it was taken
// for Intel PT ("perf.data holds no Intel PT data"). An Intel PT
// perf.data is still PT.
func TestOpenUserEventsPerfData(t *testing.T) {
	const perf = "../userevents/testdata/linuxtracepoints/perf.data"
	oracle, err := os.ReadFile(perf + ".linux.json")
	if err != nil {
		t.Fatal(err)
	}
	wantAll, wantSwitch := bytes.Count(oracle, []byte(`"n":`)), bytes.Count(oracle, []byte(`"n":"sched:sched_switch"`))
	ss, err := Open(perf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 {
		t.Fatalf("%d sources, want 1", len(ss))
	}
	s, ok := ss[0].(*eventsSource)
	if !ok {
		t.Fatalf("source %T (%s), want user_events", ss[0], ss[0].Info().Kind)
	}
	defer s.Close()
	all, switches := 0, 0
	for {
		_, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		all++
		if s.rec.System == "sched" && s.rec.Name == "sched_switch" {
			switches++
		}
	}
	in := s.Info()
	if in.Kind != KindEvents || in.Format != "perf.data" || in.Lost != 0 || in.Skipped != 0 {
		t.Errorf("input %+v, want events perf.data, nothing lost", in)
	}
	if all != wantAll || switches != wantSwitch {
		t.Errorf("%d records, %d sched_switch; perf-decode lists %d, %d", all, switches, wantAll, wantSwitch)
	}

	ps, err := Open("../intelpt/testdata/libipt/two-cpus.perf.data", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if k := p.Info().Kind; k != KindPT {
			t.Errorf("Intel PT perf.data: a source of kind %s", k)
		}
		p.Close()
	}
	if len(ps) == 0 {
		t.Error("Intel PT perf.data: no source")
	}
}
