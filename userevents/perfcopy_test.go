package userevents

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCopyToLinuxTracepoints: CopyTo writes one line per event perf-decode
// (LinuxTracepoints' decoder) printed for their perf.data and pipe.data,
// in text and NDJSON alike, and with a Keep selecting sched_switch as
// many as perf-decode printed sched:sched_switch events.
func TestCopyToLinuxTracepoints(t *testing.T) {
	if _, err := os.Stat(ltDir); err != nil {
		t.Skip("no " + ltDir)
	}
	for _, name := range []string{"perf.data", "pipe.data"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(ltDir, name))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := os.ReadFile(filepath.Join(ltDir, name+".linux.json"))
			if err != nil {
				t.Fatal(err)
			}
			all := bytes.Count(theirs, []byte(`{"n":"`))
			switches := bytes.Count(theirs, []byte(`{"n":"sched:sched_switch"`))
			copyTo := func(opt CopyOptions) []string {
				t.Helper()
				r, err := NewPerfDataReader(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				var out bytes.Buffer
				n, err := r.CopyTo(context.Background(), &out, opt)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				if int(n) != len(lines) {
					t.Fatalf("CopyTo counted %d, wrote %d lines", n, len(lines))
				}
				return lines
			}
			text := copyTo(CopyOptions{})
			js := copyTo(CopyOptions{JSON: true})
			if len(text) != all || len(js) != all {
				t.Errorf("%d text lines, %d NDJSON records; perf-decode %d events", len(text), len(js), all)
			}
			sw := copyTo(CopyOptions{JSON: true, Keep: func(r *Recorded) bool { return r.Name == "sched_switch" }})
			for _, l := range sw {
				var r struct{ Name string }
				if err := json.Unmarshal([]byte(l), &r); err != nil || r.Name != "sched_switch" {
					t.Fatalf("%q: %v", l, err)
				}
			}
			if len(sw) != switches || switches == 0 {
				t.Errorf("%d sched_switch records, perf-decode %d", len(sw), switches)
			}
		})
	}

	data, err := os.ReadFile(filepath.Join(ltDir, "perf.data"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewPerfDataReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if n, err := r.CopyTo(ctx, &out, CopyOptions{}); err != context.Canceled || n != 0 || out.Len() != 0 {
		t.Errorf("cancelled: %d, %d bytes, %v", n, out.Len(), err)
	}
}

// TestFilterNameLinuxTracepoints: -Y 'event.name == NAME' selects as many
// events as LinuxTracepoints' decoder names NAME, for every name it
// prints, EventHeader events (Provider:Event) included.
func TestFilterNameLinuxTracepoints(t *testing.T) {
	if _, err := os.Stat(ltDir); err != nil {
		t.Skip("no " + ltDir)
	}
	data, err := os.ReadFile(filepath.Join(ltDir, "perf.data"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := os.ReadFile(filepath.Join(ltDir, "perf.data.linux.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, m := range regexp.MustCompile(`\{"n":"([^"]*)"`).FindAllSubmatch(theirs, -1) {
		name := string(m[1])
		if s, ok := strings.CutPrefix(name, "user_events:"); ok {
			name = s
		} else if i := strings.IndexByte(name, ':'); i >= 0 && name[:i] == "sched" {
			name = name[i+1:]
		}
		want[name]++
	}
	headers := 0
	for name, n := range want {
		if strings.Contains(name, ":") {
			headers++
		}
		keep, err := ParseFilter(`event.name == "` + name + `"`)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewPerfDataReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.CopyTo(context.Background(), io.Discard, CopyOptions{Keep: keep})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if int(got) != n {
			t.Errorf("event.name == %q: %d events, perf-decode names %d", name, got, n)
		}
	}
	if headers < 10 {
		t.Fatalf("only %d EventHeader names in %d names", headers, len(want))
	}
}
