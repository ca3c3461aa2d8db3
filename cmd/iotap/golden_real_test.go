package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The goldens of cut, index, export and of the time windows of the
// readers (window.go), pinned before their wiring moved (issue 11): the
// help of every command whose --from/--to window.go or cut.go defines,
// cuts of each kind of trace, export's stderr (the Parquet files are
// checked by DuckDB in export_test.go), windows of usb convert, mmio
// replay and the withWindow readers, and their errors.
func init() {
	const (
		bind  = "../../mmiotrace/testdata/e1000-bind.log"
		kinds = "../../mmiotrace/testdata/kinds.log"
		probe = "../../testdata/mmiotrace/e1000-probe.log"
		pcap  = "../../testdata/usbmon/lab-capture.pcapng"
		mark  = "mark:iotap: bind 0000:00:03.0 e1000"
	)
	cliGoldens = append(cliGoldens, []struct {
		name string
		args []string
	}{
		{"help-cut", []string{"cut", "--help"}},
		{"help-index", []string{"index", "--help"}},
		{"help-export", []string{"export", "--help"}},
		{"help-usb-convert", []string{"usb", "convert", "--help"}},
		{"help-mmio-filter", []string{"mmio", "filter", "--help"}},
		{"help-mmio-replay", []string{"mmio", "replay", "--help"}},
		{"help-mmio-read", []string{"mmio", "read", "--help"}},
		{"help-pt-dump", []string{"pt", "dump", "--help"}},
		{"help-report", []string{"report", "--help"}},

		{"cut-mmio", []string{"cut", "--from", "0.18s", "--to", "0.19s", bind, "-o", "OUT"}},
		{"cut-mmio-mark-stdout", []string{"cut", "--from", mark, "--to", "+1ms", bind, "-o", "-"}},
		{"cut-pcapng", []string{"cut", "--from", "1", "--to", "+1s", pcap, "-o", "OUT"}},
		{"cut-usb-text", []string{"cut", "--from", "@1", "../../testdata/usbmon/lab-0u.txt", "-o", "OUT"}},
		{"cut-loss", []string{"cut", "--from", "0", kinds, "-o", "OUT"}},
		{"cut-loss-allow", []string{"cut", "--from", "0", "--allow-loss", kinds, "-o", "OUT"}},
		{"cut-no-output", []string{"cut", "--from", "0", bind}},
		{"cut-bad-time", []string{"cut", "--from", "soon", bind, "-o", "OUT"}},
		{"cut-no-mark", []string{"cut", "--from", "mark:nosuchmarker", bind, "-o", "OUT"}},
		{"cut-missing", []string{"cut", "--from", "0", "nosuchfile.log", "-o", "OUT"}},
		{"index-small-interval", []string{"index", "--interval", "100", bind}},

		{"export-mmio", []string{"export", "--parquet", "OUT", bind}},
		{"export-window", []string{"export", "--parquet", "OUT", "--from", "0.18s", "--to", "+10ms", bind, pcap}},
		{"export-capture-dir", []string{"export", "--parquet", "OUT", "../../testdata/capture"}},
		{"export-loss", []string{"export", "--parquet", "OUT", kinds}},
		{"export-loss-allow", []string{"export", "--parquet", "OUT", "--allow-loss", kinds}},
		{"export-no-dir", []string{"export", bind}},
		{"export-bad-partition", []string{"export", "--parquet", "OUT", "--partition", "week", bind}},
		{"export-partition-no-host", []string{"export", "--parquet", "OUT", "--partition", "host", bind}},
		{"export-no-mark", []string{"export", "--parquet", "OUT", "--from", "mark:nosuchmarker", bind}},

		{"usb-convert-window", []string{"usb", "convert", "--format", "1u", "--from", "1", "--to", "+1s", pcap, "-o", "OUT"}},
		{"usb-convert-window-time", []string{"usb", "convert", "--format", "pcapng", "--time", "1..2", pcap, "-o", "OUT"}},
		{"usb-convert-window-bad", []string{"usb", "convert", "--format", "1u", "--from", "mark:nosuchmarker", pcap, "-o", "OUT"}},
		{"mmio-filter-window-time", []string{"mmio", "filter", "--time", "0.18s..0.19s", "--write", bind}},
		{"mmio-filter-window-wall", []string{"mmio", "filter", "--from", "2026-11-25T12:00:00Z", bind}},
		{"mmio-replay-window", []string{"mmio", "replay", "--dry-run", "--from", "0.18s", "--to", "0.19s", bind}},
		{"mmio-replay-window-mark", []string{"mmio", "replay", "--dry-run", "--json", "--from", mark, "--to", "+0.2", bind}},
		{"mmio-replay-window-bad", []string{"mmio", "replay", "--dry-run", "--from", "soon", bind}},
		{"mmio-replay-no-device", []string{"mmio", "replay", bind}},

		{"mmio-read-window", []string{"mmio", "read", "--from", "0.18s", "--to", "0.19s", bind}},
		{"mmio-read-window-json", []string{"mmio", "read", "--json", "--from", mark, "--to", "+1ms", bind}},
		{"mmio-read-window-truncated", []string{"mmio", "read", "--from", "0", "testdata/e1000-probe-cut.log"}},
		{"mmio-read-window-bad", []string{"mmio", "read", "--from", "mark:nosuchmarker", bind}},
		{"mmio-read-window-bad-time", []string{"mmio", "read", "--to", "later", bind}},
		{"mmio-stats-window", []string{"mmio", "stats", "--from", "0.5", "--to", "+0.1", probe}},
		{"mmio-names-window-dir", []string{"mmio", "names", "--from", "0", "--to", "+0.5", "../../testdata/capture/mmio.log.zst"}},
		{"mmio-diff-window", []string{"mmio", "diff", "--from", "0.18s", "--to", "0.3s", bind, bind}},
	}...)
}

// TestIndexGolden: iotap index of a copy of a log prints the summary its
// golden keeps, and cut then seeks with the index (its summary says so).
func TestIndexGolden(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "e1000.log")
	if err := os.WriteFile(log, src, 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, args := range [][]string{
		{"index", "--interval", "65536", log},
		{"cut", "--from", "0.5", "--to", "+0.1", log, "-o", filepath.Join(dir, "cut.log")},
		{"index", log, "-o", "x"},
	} {
		var stdout, stderr bytes.Buffer
		code := exitCode(run(context.Background(), args, &stdout, &stderr), &stderr)
		fmt.Fprintf(&b, "# iotap %s\nexit %d\n", strings.ReplaceAll(strings.Join(args, " "), dir, "TMP"), code)
		goldenSection(&b, "stdout", strings.ReplaceAll(stdout.String(), dir, "TMP"))
		goldenSection(&b, "stderr", strings.ReplaceAll(stderr.String(), dir, "TMP"))
	}
	checkGoldenText(t, filepath.Join("testdata", "golden", "index-cut.golden"), "iotap index", b.String())
}
