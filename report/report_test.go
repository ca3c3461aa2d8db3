package report

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// The series the HTML report plots add up to the counts of the stats
// verbs: bytes per endpoint, accesses per BAR and per register, events per
// name.
func TestBuildSeriesMatchCounts(t *testing.T) {
	r, err := Build(context.Background(), []string{"../testdata"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := map[string]bool{}
	for _, tr := range r.Traces {
		if tr.Err != nil {
			t.Errorf("%s: %v", tr.Name, tr.Err)
			continue
		}
		seen[tr.Source] = true
		switch {
		case tr.USB != nil:
			eps := tr.USB.Stats.Endpoints()
			if len(eps) != len(tr.USB.Endpoints) {
				t.Fatalf("%s: %d endpoints plotted, %d counted", tr.Name, len(tr.USB.Endpoints), len(eps))
			}
			for i, s := range eps {
				e := tr.USB.Endpoints[i]
				if got := uint64(e.Bytes.Total()); got != s.Bytes {
					t.Errorf("%s %s: %d bytes plotted, %d counted", tr.Name, e.Name(), got, s.Bytes)
				}
				if got := uint64(e.Errors.Total()); got != s.Errors+s.SubmitErrors+s.Stalls+s.Cancelled {
					t.Errorf("%s %s: %d errors plotted, %d+%d+%d+%d counted", tr.Name, e.Name(), got, s.Errors, s.SubmitErrors, s.Stalls, s.Cancelled)
				}
				var n uint64
				for _, c := range e.Latency.Counts {
					n += c
				}
				if n != s.Latency.Count() {
					t.Errorf("%s %s: %d latencies plotted, %d counted", tr.Name, e.Name(), n, s.Latency.Count())
				}
			}
		case tr.MMIO != nil:
			st := tr.MMIO.Stats
			var bars, maps float64
			for _, b := range tr.MMIO.BARs {
				bars += b.Accesses.Total()
			}
			for _, m := range st.Maps {
				maps += float64(m.Reads + m.Writes)
			}
			if bars != maps || bars != float64(st.Kinds[mmiotrace.KindRead]+st.Kinds[mmiotrace.KindWrite]) {
				t.Errorf("%s: %v accesses plotted per BAR, %v counted per map", tr.Name, bars, maps)
			}
			if len(tr.MMIO.Regs) != len(st.Regs) {
				t.Fatalf("%s: %d registers plotted, %d counted", tr.Name, len(tr.MMIO.Regs), len(st.Regs))
			}
			for i, rs := range st.Regs {
				if got := tr.MMIO.Regs[i].Accesses.Total(); got != float64(rs.Reads+rs.Writes) {
					t.Errorf("%s %s: %v accesses plotted, %d counted", tr.Name, rs.Key, got, rs.Reads+rs.Writes)
				}
				v := tr.MMIO.Regs[i].Values
				if last := v.Values[len(v.Values)-1]; last != rs.LastValue {
					t.Errorf("%s %s: last value plotted %#x, counted %#x", tr.Name, rs.Key, last, rs.LastValue)
				}
			}
		case tr.Events != nil:
			for _, e := range tr.Events.ByName {
				if int64(e.Rate.Total()) != e.Count {
					t.Errorf("%s %s: %v plotted, %d counted", tr.Name, e.Name, e.Rate.Total(), e.Count)
				}
			}
		}
	}
	for _, s := range []string{"usb", "mmio", "events"} {
		if !seen[s] {
			t.Errorf("no %s trace in ../testdata", s)
		}
	}
}

// "-" reads a trace from Options.Stdin; it is named "-" and summarised
// like the same file.
func TestBuildStdin(t *testing.T) {
	b, err := os.ReadFile("../testdata/capture/usb.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), []string{"-", "../testdata/capture/usb.pcapng"}, Options{Stdin: bytes.NewReader(b)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Traces) != 2 || r.Traces[0].Name != "-" || r.Traces[0].USB == nil || r.Traces[1].USB == nil {
		t.Fatalf("traces: %+v", r.Traces)
	}
	var a, c bytes.Buffer
	WriteUSBTable(&a, r.Traces[0].USB.Stats, r.Traces[0].USB.Pairs, r.Traces[0].USB.IDs, USBTableOptions{})
	WriteUSBTable(&c, r.Traces[1].USB.Stats, r.Traces[1].USB.Pairs, r.Traces[1].USB.IDs, USBTableOptions{})
	if a.String() != c.String() || a.Len() == 0 {
		t.Errorf("stdin summary differs from the file's:\n%s\n%s", a.String(), c.String())
	}
}
