package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report's text output for the bundled testdata is pinned by golden
// files: moving its logic between packages must not change a byte. The
// Perfetto file name, a temporary path, is replaced by OUT.
func TestReportGolden(t *testing.T) {
	out := filepath.Join(t.TempDir(), "all.pftrace")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"report-text.golden", []string{"report", "--allow-loss", "../../testdata"}},
		{"report-timeline.golden", []string{"report", "--allow-loss", "../../testdata", "-o", out}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), tc.args, &stdout, &stderr); err != nil {
				t.Fatalf("report: %v\n%s", err, stderr.String())
			}
			got := strings.ReplaceAll(stdout.String(), out, "OUT")
			golden := filepath.Join("testdata", tc.name)
			if os.Getenv("IOTAP_UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (IOTAP_UPDATE_GOLDEN=1 creates it)", err)
			}
			if got != string(want) {
				t.Errorf("report output differs from %s (IOTAP_UPDATE_GOLDEN=1 rewrites it, after checking the change):\n%s", golden, lineDiff(string(want), got))
			}
		})
	}
}
