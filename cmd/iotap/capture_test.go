package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/export"
)

// TestCaptureUsage checks the command line before any kernel access.
// The capture itself is tested in the lab (timeline.TestLabCaptureOrder).
func TestCaptureUsage(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o700)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o600)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"capture", "--usb"}, exitUsage, "-o DIR is required"},
		{[]string{"capture", "-o", filepath.Join(dir, "a")}, exitUsage, "at least one source"},
		{[]string{"capture", "--usb", "--bind", "0000:00:03.0", "-o", filepath.Join(dir, "a")}, exitUsage, "--bind needs --mmio"},
		{[]string{"capture", "--mmio", "--bind", "nonsense", "-o", filepath.Join(dir, "a")}, exitUsage, "--bind"},
		{[]string{"capture", "--events", " bad-name ", "-o", filepath.Join(dir, "a")}, exitUsage, `capture: --events "bad-name": letters, digits and '_' only`},
		{[]string{"capture", "--events", "x u99 y", "-o", filepath.Join(dir, "a")}, exitUsage, `capture: --events "x u99 y": `},
		{[]string{"capture", "--usb", "--bus", "300", "-o", filepath.Join(dir, "a")}, exitUsage, "--bus"},
		{[]string{"capture", "--usb", "stray", "-o", filepath.Join(dir, "a")}, exitUsage, "after --"},
		{[]string{"capture", "--usb", "-o", full}, exitFailure, "new or empty directory"},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if code := exitCode(err, &bytes.Buffer{}); code != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: exit %d (%v), want %d with %q", tc.args, code, err, tc.code, tc.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("a refused capture left its directory: %v", err)
	}
}

// With --parquet, a source's loss is said once: in the capture's words
// when the capture counted it (the export's row repeats it from
// loss.json), in the export's when only reading the trace found it.
func TestCaptureParquetLossOnce(t *testing.T) {
	lost := []capture.SourceLoss{{Source: "usb", Lost: 3, Text: "usb: 3 events dropped by the kernel"}}
	rows := []export.CaptureRow{
		{Identity: export.Identity{SourceFile: "usb.pcapng"}, Source: "usb", Loss: "the capture records 3 events dropped by the kernel; recorded by the capture: usb: 3 events dropped by the kernel"},
		{Identity: export.Identity{SourceFile: "mmio.log"}, Source: "mmio"},
		{Identity: export.Identity{SourceFile: "events.ndjson"}, Source: "events", Loss: "2 unreadable lines skipped"},
	}
	got := exportLoss(lost, rows)
	want := []string{"events.ndjson: 2 unreadable lines skipped (recorded in the captures table)"}
	if !slices.Equal(got, want) {
		t.Errorf("exportLoss: %q, want %q", got, want)
	}
}
