package main

import (
	"bytes"
	"context"
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
			checkGoldenText(t, filepath.Join("testdata", tc.name), "iotap "+strings.Join(tc.args, " "), strings.ReplaceAll(stdout.String(), out, "OUT"))
		})
	}
}
