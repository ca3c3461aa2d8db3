package main

import (
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabDoctor runs "iotap doctor --json" on the lab kernel, which has
// every facility the lab needs built in, and checks that doctor finds
// them. It skips under -short (see internal/vmlab).
func TestLabDoctor(t *testing.T) {
	res := vmlab.Run(t, vmlab.Machine{USB: true, Script: `iotap doctor --json >/out/doctor.json`})
	if res.ExitCode != 0 {
		t.Fatalf("iotap doctor --json exited %d in the guest:\n%s", res.ExitCode, res.Console)
	}
	b := res.ReadOut(t, "doctor.json")
	rep := doctorFacilities(t, b)
	seen := map[string]bool{}
	for _, f := range rep {
		if seen[f.Name] {
			t.Errorf("facility %q reported twice", f.Name)
		}
		seen[f.Name] = true
		if f.Detail == "" {
			t.Errorf("facility %q has no detail", f.Name)
		}
		if !*f.Available && f.Remedy == nil {
			t.Errorf("facility %q is missing but has no remedy", f.Name)
		}
	}
	want := []string{"tracefs", "debugfs", "usbmon", "usbmon-binary", "mmiotrace", "user_events"}
	for _, name := range want {
		found := false
		for _, f := range rep {
			if f.Name != name {
				continue
			}
			found = true
			if !*f.Available {
				t.Errorf("in the lab, doctor says %s is missing: %s", name, f.Detail)
			}
		}
		if !found {
			t.Errorf("doctor does not report facility %q", name)
		}
	}
	for _, name := range []string{"intel_pt", "perf_event"} {
		if !seen[name] {
			t.Errorf("doctor does not report facility %q", name)
		}
	}
	t.Logf("doctor --json in the guest:\n%s", b)
}
