package timeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
	"github.com/klauspost/compress/zstd"
)

// sampleDir is the bundled all-sources capture (recorded by
// TestLabRecordCaptureSample).
const sampleDir = "../testdata/capture"

// sampleFiles are the traces of sampleDir.
var sampleFiles = []string{"usb.pcapng", "mmio.log.zst", "events.ndjson"}

// TestCaptureSample checks the bundled capture: aligned by its clocks.json,
// the marker between the two actions on every source.
func TestCaptureSample(t *testing.T) {
	clocks, err := LoadClocks(filepath.Join(sampleDir, "clocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range sampleFiles {
		files = append(files, filepath.Join(sampleDir, f))
	}
	checkCaptureOrder(t, files, clocks)
}

// TestLabRecordCaptureSample records testdata/capture with the scenario
// of TestLabCaptureOrder, when IOTAP_RECORD_SAMPLES=1. The mmiotrace log
// is stored zstd-compressed (mmio.log.zst) to keep the sample small.
func TestLabRecordCaptureSample(t *testing.T) {
	if os.Getenv("IOTAP_RECORD_SAMPLES") != "1" {
		t.Skip("re-records testdata/capture with IOTAP_RECORD_SAMPLES=1")
	}
	res := vmlab.Run(t, vmlab.Machine{USB: true, NIC: true, Script: captureOrderScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d:\n%s", res.ExitCode, res.Console)
	}
	if rc := strings.TrimSpace(string(res.ReadOut(t, "capture.rc"))); rc != "0" {
		t.Fatalf("iotap capture exited %s:\n%s\n%s", rc, res.ReadOut(t, "capture.err"), res.Console)
	}
	dir := filepath.Join(res.Out, "cap")
	clocks, err := LoadClocks(filepath.Join(dir, "clocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkCaptureOrder(t, []string{
		filepath.Join(dir, "usb.pcapng"), filepath.Join(dir, "mmio.log"), filepath.Join(dir, "events.ndjson"),
	}, clocks)
	if t.Failed() {
		t.Fatal("the new recording fails the order check: testdata/capture left alone")
	}
	if err := os.MkdirAll(sampleDir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyOut := func(from, to string, compress bool) {
		b := res.ReadOut(t, "cap/"+from)
		if compress {
			var buf bytes.Buffer
			zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
			if err != nil {
				t.Fatal(err)
			}
			zw.Write(b)
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			b = buf.Bytes()
		}
		if err := os.WriteFile(filepath.Join(sampleDir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyOut("usb.pcapng", "usb.pcapng", false)
	copyOut("mmio.log", "mmio.log.zst", true)
	copyOut("events.ndjson", "events.ndjson", false)
	copyOut("clocks.json", "clocks.json", false)
	t.Logf("capture stderr:\n%s", res.ReadOut(t, "capture.err"))
	TestCaptureSample(t)
}
