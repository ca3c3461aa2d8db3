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
		"== ../../testdata/usbmon/lab-usbmon0.bin: usb (usbmon binary)",
		"== ../../testdata/capture/usb.pcapng: usb (usbmon pcapng)",
		"== ../../testdata/capture/mmio.log.zst: mmio (mmiotrace log)",
		"== ../../testdata/capture/events.ndjson: events (user_events NDJSON)",
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

// The report's timeline of all bundled samples aligns the traces of the
// all-sources capture (testdata/capture) with its clocks.json, and only
// those: the older samples, recorded separately, are placed unaligned.
func TestReportBundledSamplesTimeline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "all.pftrace")
	var stdout, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", "../../testdata", "-o", out}, &stdout, &errb); err != nil {
		t.Fatalf("report: %v\nstderr: %s", err, errb.String())
	}
	s := stdout.String()
	if !strings.Contains(s, "clocks: ../../testdata/capture/clocks.json (the traces of ../../testdata/capture)") {
		t.Errorf("report does not name the capture's clocks file:\n%s", s)
	}
	aligned := map[string]string{} // input path -> ALIGNED column
	_, table, _ := strings.Cut(s, "== timeline: "+out)
	for _, l := range strings.Split(table, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && strings.HasPrefix(f[1], "../../testdata/") {
			aligned[f[1]] = f[len(f)-1]
		}
	}
	for _, in := range []string{"usb.pcapng", "mmio.log.zst", "events.ndjson"} {
		if a := aligned["../../testdata/capture/"+in]; a != "ALIGNED" {
			t.Errorf("capture/%s: aligned column %q, want ALIGNED", in, a)
		}
	}
	for _, in := range []string{"usbmon/lab-capture.pcapng", "usbmon/lab-0u.txt", "mmiotrace/e1000-probe.log"} {
		if a := aligned["../../testdata/"+in]; a != "no" {
			t.Errorf("%s (not of the capture): aligned column %q, want no", in, a)
		}
	}
	if !strings.Contains(s, "3 of ") || !strings.Contains(s, " inputs aligned by their clocks file; the others are not aligned") {
		t.Errorf("report does not say which inputs are aligned:\n%s", s)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("no Perfetto trace written: %v", err)
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
