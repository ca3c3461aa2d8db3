package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/capture"
)

// TestExportCaptureLoss: what a capture recorded as lost (its loss.json:
// usbmon drops, user_events lost records, mmiotrace overruns, counts the
// traces may not hold) and what the export finds (a truncated trace) are
// in the captures table, as DuckDB reads it, and make export exit 3
// unless --allow-loss. A source that lost events but left no file still
// has its row.
func TestExportCaptureLoss(t *testing.T) {
	needDuckDB(t)
	cap := filepath.Join(t.TempDir(), "cap")
	if err := os.Mkdir(cap, 0o700); err != nil {
		t.Fatal(err)
	}
	// The bundled capture without its MMIO log, its pcapng cut short.
	for _, name := range []string{"usb.pcapng", "events.ndjson", "clocks.json"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/capture", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "usb.pcapng" {
			b = b[:len(b)-10]
		}
		if err := os.WriteFile(filepath.Join(cap, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := capture.WriteLoss(cap, []capture.SourceLoss{
		{Source: "events", Lost: 7, Text: "events: 5 lost, 2 undecodable"},
		{Source: "mmio", Lost: 3, Text: "mmio: 3 events lost"},
	}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, errs, code := runIotap(t, "export", "--parquet", out, cap)
	if code != 3 || !strings.Contains(errs, "events: 5 lost, 2 undecodable") || !strings.Contains(errs, "captures table") {
		t.Errorf("export of a capture with loss: exit %d, want 3: %s", code, errs)
	}
	r := duck(t, fmt.Sprintf(`SELECT source, records, lost_events, truncated, complete, loss FROM '%s/captures/*.parquet' ORDER BY source`, out))
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%s records=%d lost=%d truncated=%v complete=%v loss=%q", row["source"], num(t, row["records"]), num(t, row["lost_events"]), row["truncated"], row["complete"], row["loss"]))
	}
	want := []string{
		`events records=4 lost=7 truncated=false complete=true loss="recorded by the capture: events: 5 lost, 2 undecodable"`,
		`mmio records=0 lost=3 truncated=false complete=true loss="recorded by the capture: mmio: 3 events lost"`,
		`usb records=11 lost=0 truncated=true complete=true loss="usbmon: pcapng offset 9452: block of 112 bytes cut short after 102"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("captures rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, errs, code := runIotap(t, "export", "--parquet", filepath.Join(t.TempDir(), "o2"), "--allow-loss", cap); code != 0 {
		t.Errorf("--allow-loss: exit %d: %s", code, errs)
	}
	// One file of the capture directory: its source's loss only.
	_, errs, code = runIotap(t, "export", "--parquet", filepath.Join(t.TempDir(), "o3"), filepath.Join(cap, "events.ndjson"))
	if code != 3 || !strings.Contains(errs, "5 lost") || strings.Contains(errs, "mmio") {
		t.Errorf("export of events.ndjson of a capture with loss: exit %d: %s", code, errs)
	}
}
