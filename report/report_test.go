package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// Files that are not traces are listed with what they are and why they
// are not a trace, in the text, the NDJSON and the HTML.
func TestBuildNotTracesSayWhy(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"empty.bin":   "",
		"image.png":   "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"notes.txt":   "hello\nworld\n",
		"clocks.json": `{"version":1}`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Build(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := map[string]string{ // name -> start of the reason
		"empty.bin":   "empty",
		"image.png":   "a PNG image",
		"notes.txt":   "text (line 1 ",
		"clocks.json": "clocks file",
	}
	if len(r.Others) != len(want) {
		t.Fatalf("others: %+v", r.Others)
	}
	for _, o := range r.Others {
		if w := want[filepath.Base(o.Name)]; w == "" || !strings.HasPrefix(o.Why, w) {
			t.Errorf("%s: why %q, want %q...", o.Name, o.Why, w)
		}
	}
	var text, js, html bytes.Buffer
	if err := r.WriteText(&text, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&html, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	var last struct {
		NotTraces []Other `json:"not_traces"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(last.NotTraces, r.Others) {
		t.Errorf("NDJSON not_traces %+v, want %+v", last.NotTraces, r.Others)
	}
	for _, o := range r.Others {
		if !strings.Contains(text.String(), o.Why) {
			t.Errorf("text lacks %s's reason %q:\n%s", o.Name, o.Why, text.String())
		}
		if !strings.Contains(html.String(), "empty") || !strings.Contains(html.String(), "a PNG image") {
			t.Errorf("HTML lacks the reasons")
		}
	}
}

// TestEventsNDJSON: report --json's user_event_stats records, one per
// event name with its count, parse with encoding/json; the counts are
// those of an events stream whose lines are counted here by name.
func TestEventsNDJSON(t *testing.T) {
	in := `{"kind":"input","schema":1,"source":"events","file":null,"format":"tracefs","clock":"trace"}
{"kind":"user_event","ts_ns":100,"wall_ns":null,"cpu":0,"tid":42,"pid":null,"system":"user_events","name":"b\"q","fields":{"n":1}}
{"kind":"user_event","ts_ns":200,"wall_ns":null,"cpu":0,"tid":42,"pid":null,"system":"user_events","name":"a","fields":{"n":2}}
{"name":"a","ts":300,"cpu":0,"pid":42,"fields":{}}
`
	ev, _, err := AnalyzeEvents(context.Background(), strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b := AppendEventsNDJSON(nil, "ev.ndjson", ev)
	want := map[string]int64{"a": 2, "b\"q": 1}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if ev.Total != 3 || len(lines) != len(want) {
		t.Fatalf("total %d, records:\n%s", ev.Total, b)
	}
	for _, l := range lines {
		var r struct {
			Kind, File, Name string
			Count            int64
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if r.Kind != NDJSONEventStats || r.File != "ev.ndjson" || want[r.Name] != r.Count {
			t.Errorf("%s: want %v", l, want)
		}
	}
}

// FuzzEventsNDJSON: a user_event_stats record of any name and count is
// one line that encoding/json parses back to them.
func FuzzEventsNDJSON(f *testing.F) {
	f.Add("iotap_marker", "cap/events.ndjson", int64(3))
	f.Add("\xff\"\n", "", int64(-1))
	f.Fuzz(func(t *testing.T, name, file string, count int64) {
		b := AppendEventsNDJSON(nil, file, &Events{ByName: []*Event{{Name: name, Count: count}}})
		if strings.IndexByte(string(b), '\n') != len(b)-1 {
			t.Fatalf("not one line: %q", b)
		}
		var r struct {
			Kind, File, Name string
			Count            int64
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		text := func(s string) string {
			j, _ := json.Marshal(s)
			var w string
			json.Unmarshal(j, &w)
			return w
		}
		if r.Kind != NDJSONEventStats || r.File != text(file) || r.Name != text(name) || r.Count != count {
			t.Fatalf("%s: want %q %q %d", b, file, name, count)
		}
	})
}

// An empty directory is nothing to report: Build fails naming it.
func TestBuildEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	r, err := Build(context.Background(), []string{dir}, Options{})
	if err == nil {
		r.Close()
		t.Fatalf("an empty directory built a report of %d traces", len(r.Traces))
	}
	if !errors.Is(err, ErrNothing) || !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q: want ErrNothing naming %s", err, dir)
	}
}

// LossError names the traces that record lost data: a pcapng cut at a
// third of its bytes, beside the whole one, which is not named.
func TestLossErrorNamesTraces(t *testing.T) {
	b, err := os.ReadFile("../testdata/capture/usb.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole, cut := filepath.Join(dir, "whole.pcapng"), filepath.Join(dir, "cut.pcapng")
	os.WriteFile(whole, b, 0o600)
	os.WriteFile(cut, b[:len(b)/3], 0o600)
	r, err := Build(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, want := r.LossError(), "1 of 2 traces record lost data: "+cut; got != want {
		t.Errorf("LossError %q, want %q", got, want)
	}
	r2, err := Build(context.Background(), []string{whole}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if got := r2.LossError(); got != "" {
		t.Errorf("whole trace: LossError %q, want none", got)
	}
}
