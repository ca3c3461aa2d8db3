package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestDoctorJSONSchema(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"doctor", "--json"}, &out, &errb); err != nil {
		t.Fatalf("doctor --json: %v (stderr %s)", err, errb.String())
	}
	rep := doctorFacilities(t, out.Bytes())
	seen := map[string]bool{}
	for _, f := range rep {
		if f.Available == nil || f.Detail == "" {
			t.Errorf("facility %q lacks available or detail", f.Name)
		}
		if f.Available != nil && !*f.Available && (f.Remedy == nil || *f.Remedy == "") {
			t.Errorf("missing facility %q has no remedy", f.Name)
		}
		seen[f.Name] = true
	}
	for _, n := range []string{"tracefs", "debugfs", "usbmon", "usbmon-binary", "mmiotrace", "user_events", "intel_pt", "perf_event"} {
		if !seen[n] {
			t.Errorf("facility %q not reported", n)
		}
	}
}

// doctorFacility is a doctor_facility record of doctor --json.
type doctorFacility struct {
	Name      string  `json:"name"`
	Available *bool   `json:"available"`
	Detail    string  `json:"detail"`
	Remedy    *string `json:"remedy"`
}

// doctorFacilities reads doctor --json's NDJSON (docs/ndjson.md): an
// input record of source "doctor" first, a doctor_summary last whose
// counts match the doctor_facility records between.
func doctorFacilities(t *testing.T, b []byte) []doctorFacility {
	t.Helper()
	var fs []doctorFacility
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, l := range lines {
		var r struct {
			Kind       string `json:"kind"`
			Source     string `json:"source"`
			Schema     int    `json:"schema"`
			Facilities int    `json:"facilities"`
			Missing    int    `json:"missing"`
			Available  any    `json:"available"`
			doctorFacility
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, b)
		}
		switch {
		case i == 0:
			if r.Kind != "input" || r.Source != "doctor" || r.Schema != 1 {
				t.Fatalf("first record %s, want the input record of source doctor, schema 1", l)
			}
		case i == len(lines)-1:
			missing := 0
			for _, f := range fs {
				if !*f.Available {
					missing++
				}
			}
			if r.Kind != "doctor_summary" || r.Facilities != len(fs) || r.Missing != missing {
				t.Fatalf("last record %s, want doctor_summary of %d facilities, %d missing", l, len(fs), missing)
			}
		default:
			if r.Kind != "doctor_facility" {
				t.Fatalf("record %s, want doctor_facility", l)
			}
			a, ok := r.Available.(bool)
			if !ok {
				t.Fatalf("%s: available is not a boolean", l)
			}
			f := r.doctorFacility
			f.Available = &a
			fs = append(fs, f)
		}
	}
	return fs
}

func TestDoctorHuman(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"doctor"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "facilities available") || !strings.Contains(out.String(), "usbmon-binary") {
		t.Errorf("unexpected output:\n%s", out.String())
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"doctor", "--nope"}, {"version", "extra"}} {
		err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		if code := exitCode(err, &bytes.Buffer{}); code != exitUsage {
			t.Errorf("%v: exit %d (%v), want %d", args, code, err, exitUsage)
		}
	}
}

// The jq filter in doctor's Examples runs on doctor --json's output and
// selects exactly the facilities that are not available (jq is the
// oracle; the example used to name keys the output does not have).
func TestDoctorExampleJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq not installed")
	}
	m := regexp.MustCompile(`\| jq (-c )?'([^']+)'`).FindStringSubmatch(newDoctorCmd(&env{}).Example)
	if m == nil {
		t.Fatal("doctor's Example has no jq filter")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"doctor", "--json"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	rep := doctorFacilities(t, out.Bytes())
	var want []string
	for _, f := range rep {
		if !*f.Available {
			want = append(want, f.Name)
		}
	}
	cmd := exec.Command(jq, "-c", m[2])
	cmd.Stdin = &out
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("jq %q: %v\n%s", m[2], err, b)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var f struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil || f.Name == "" {
			t.Fatalf("jq printed %q, not a facility", line)
		}
		got = append(got, f.Name)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("jq %q selected %v, want the unavailable facilities %v", m[2], got, want)
	}
}
