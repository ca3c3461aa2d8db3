package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
