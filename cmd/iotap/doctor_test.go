package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestDoctorJSONSchema(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"doctor", "--json"}, &out, &errb); err != nil {
		t.Fatalf("doctor --json: %v (stderr %s)", err, errb.String())
	}
	var rep struct {
		Facilities []struct {
			Name      string `json:"name"`
			Available *bool  `json:"available"`
			Detail    string `json:"detail"`
			Remedy    string `json:"remedy"`
		} `json:"facilities"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	seen := map[string]bool{}
	for _, f := range rep.Facilities {
		if f.Available == nil || f.Detail == "" {
			t.Errorf("facility %q lacks available or detail", f.Name)
		}
		if f.Available != nil && !*f.Available && f.Remedy == "" {
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
