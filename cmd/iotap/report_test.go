package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportBundledSamples(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", "../../testdata"}, &out, &errb); err != nil {
		t.Fatalf("report: %v\nstderr: %s", err, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"== ../../testdata/mmiotrace/e1000-probe.log: mmio (mmiotrace log)",
		"== ../../testdata/usbmon/lab-capture.pcapng: usb (usbmon pcapng)",
		"== ../../testdata/usbmon/lab-0u.txt: usb (usbmon 1u)",
		"== ../../testdata/usbmon/lab-hidbus-t.txt: usb (usbmon 1t)",
		"0000:00:03.0/0+0xd8", // the e1000's IMC writes, from mmio stats
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(s, "README.md:") || !strings.Contains(s, "not traces") {
		t.Errorf("README files must be listed as not traces, not read:\n%s", s)
	}
}

func TestReportLossExit3(t *testing.T) {
	dir := t.TempDir()
	log := "VERSION 20070824\nMARK 12.000001 Lost 7 events.\n"
	if err := os.WriteFile(filepath.Join(dir, "lossy.log"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"report", dir}, &out, &errb)
	if code := exitCode(err, &bytes.Buffer{}); code != exitDataLost {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, exitDataLost, out.String())
	}
	if !strings.Contains(out.String(), "LOSS") {
		t.Errorf("summary does not flag the loss:\n%s", out.String())
	}
	err = run(context.Background(), []string{"report", "--allow-loss", dir}, &out, &errb)
	if err != nil {
		t.Errorf("--allow-loss: %v", err)
	}
}

func TestReportMissingPath(t *testing.T) {
	err := run(context.Background(), []string{"report", filepath.Join(t.TempDir(), "nope")}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error for a missing path")
	}
}
