package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUSBWorkers: with --workers 2 (the capture decoded on a goroutine
// of its own, usbmon.Prefetch) usb read, read --json, stats --json and
// pair print exactly what they print with one goroutine, on the km003c
// capture (1,000 Hz ADC polling, 3,458 events) and the lab pcapng.
func TestUSBWorkers(t *testing.T) {
	files := []string{filepath.Join("..", "..", "testdata", "usbmon", "lab-capture.pcapng")}
	if p := filepath.Join(usbShared, "km003c-adc-1000hz.pcapng"); func() bool { _, err := os.Stat(p); return err == nil }() {
		files = append(files, p)
	}
	for _, f := range files {
		for _, args := range [][]string{{"read"}, {"read", "--json"}, {"stats", "--json"}, {"pair"}} {
			one, oneErr, oneCode := usbRun(t, append(append([]string{"usb"}, args...), "--workers", "1", f)...)
			two, twoErr, twoCode := usbRun(t, append(append([]string{"usb"}, args...), "--workers", "2", f)...)
			if one != two || oneErr != twoErr || oneCode != twoCode {
				t.Errorf("%s %v: --workers 2 differs (%d/%d bytes, exit %d/%d, stderr %q/%q)", filepath.Base(f), args, len(two), len(one), twoCode, oneCode, twoErr, oneErr)
			}
			if len(one) < 1000 {
				t.Errorf("%s %v: %d bytes of output", filepath.Base(f), args, len(one))
			}
		}
	}
}
