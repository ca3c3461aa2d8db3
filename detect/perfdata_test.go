package detect

import (
	"encoding/binary"
	"os"
	"testing"
)

// TestPerfDataKind: a perf.data whose attributes are tracepoints (the
// LinuxTracepoints recording of user_events and sched:sched_switch, plus
// perf's dummy software event) is Events; the same file with one
// attribute of a PMU of its own (type 8, as intel_pt registers) is PT,
// as are a perf.data of a software event (cpu-clock) and one whose
// attributes are not in the head. Head says PT for all of them.
func TestPerfDataKind(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > HeadSize {
			b = b[:HeadSize]
		}
		return b
	}
	events := read("../userevents/testdata/linuxtracepoints/perf.data")
	pmu := append([]byte(nil), events...)
	off, entry := binary.LittleEndian.Uint64(pmu[24:]), binary.LittleEndian.Uint64(pmu[16:])
	binary.LittleEndian.PutUint32(pmu[off+entry:], 8) // the second attribute
	far := append([]byte(nil), events...)
	binary.LittleEndian.PutUint64(far[24:], uint64(len(far))) // the section past the head
	for _, c := range []struct {
		name string
		head []byte
		want Kind
	}{
		{"user_events", events, Events},
		{"with a PMU event", pmu, PT},
		{"attributes past the head", far, PT},
		{"cpu-clock", read("../perfdata/testdata/cpu-clock-z.data"), PT},
		{"PT", read("../intelpt/testdata/libipt/two-cpus.perf.data"), PT},
		{"short", events[:30], PT},
	} {
		if res, err := Head(c.head, false); err != nil || res.Kind != PT {
			t.Errorf("%s: Head %v, %v; want PT", c.name, res, err)
		}
		if got := PerfDataKind(c.head); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestRecognise: Recognise, the rule export, report and timeline share,
// says Events (format perf.data) for the LinuxTracepoints perf.data of
// tracepoints and PT for an Intel PT perf.data and a raw PT stream,
// where Head says PT for every one.
func TestRecognise(t *testing.T) {
	for _, c := range []struct {
		path string
		want Kind
	}{
		{"../userevents/testdata/linuxtracepoints/perf.data", Events},
		{"../intelpt/testdata/libipt/two-cpus.perf.data", PT},
		{"../perfdata/testdata/cpu-clock-z.data", PT},
		{"../intelpt/testdata/libipt/cbr-tsc-tma-mtc-cyc.pt", PT},
	} {
		b, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > HeadSize {
			b = b[:HeadSize]
		}
		res, err := Recognise(b, len(b) < HeadSize)
		if err != nil || res.Kind != c.want {
			t.Errorf("%s: %v, %v; want %s", c.path, res, err, c.want)
		}
	}
}
