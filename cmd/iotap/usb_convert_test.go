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

func usbLab(name string) string { return filepath.Join("..", "..", "testdata", "usbmon", name) }

func runUSB(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func stripStamps(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) == 3 {
			out = append(out, f[0]+" "+f[2])
		}
	}
	return out
}

// The lab's pcapng capture converted to 1u shows what the kernel's own 0u
// text of the same moment shows (timestamps are different clocks).
func TestUSBConvertPcapngTo1uMatchesKernel(t *testing.T) {
	out, errs, code := runUSB(t, "usb", "convert", "--to", "1u", usbLab("lab-capture.pcapng"), "-o", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	kernel, err := os.ReadFile(usbLab("lab-capture.0u"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := stripStamps(out), stripStamps(string(kernel))
	// Both were recorded at once; the tails may differ by the events of
	// the moment the readers were stopped one after the other.
	n := min(len(got), len(want))
	if n < 100 || len(got)-n > 5 || len(want)-n > 5 || strings.Join(got[:n], "\n") != strings.Join(want[:n], "\n") {
		t.Fatalf("converted text differs from the kernel's (%d vs %d lines)", len(got), len(want))
	}
	if !strings.Contains(errs, fmt.Sprintf("converted %d events (pcapng to 1u)", len(got))) || !strings.Contains(errs, "wall-clock") {
		t.Errorf("stderr: %q", errs)
	}
}

// Text to pcapng to text is lossless, timestamps included.
func TestUSBConvertTextRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, to := range []string{"pcapng", "pcap"} {
		mid := filepath.Join(dir, "mid."+to)
		if _, errs, code := runUSB(t, "usb", "convert", "--to", to, usbLab("lab-capture.0u"), "-o", mid); code != 0 {
			t.Fatalf("to %s: exit %d: %s", to, code, errs)
		}
		fi, err := os.Stat(mid)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v, want 0600", mid, err, fi.Mode().Perm())
		}
		back, errs, code := runUSB(t, "usb", "convert", "--to", "1u", mid, "-o", "-")
		if code != 0 {
			t.Fatalf("back from %s: exit %d: %s", to, code, errs)
		}
		kernel, _ := os.ReadFile(usbLab("lab-capture.0u"))
		if back != string(kernel) {
			t.Fatalf("1u -> %s -> 1u is not byte for byte", to)
		}
	}
}

func TestUSBConvertLossAndErrors(t *testing.T) {
	dir := t.TempDir()
	// 189 cannot hold intervals: said on stderr, exit 0 (the format's limit,
	// not lost input).
	_, errs, code := runUSB(t, "usb", "convert", "--to", "pcap", "--link-type", "189", usbLab("lab-capture.pcapng"), "-o", filepath.Join(dir, "a.pcap"))
	if code != 0 || !strings.Contains(errs, "interval/start frame/ndesc") {
		t.Errorf("189: exit %d, %q", code, errs)
	}
	// Truncated input: exit 3 with the position, 0 with --allow-loss.
	full, _ := os.ReadFile(usbLab("lab-capture.pcapng"))
	cut := filepath.Join(dir, "cut.pcapng")
	os.WriteFile(cut, full[:len(full)-100], 0o600)
	_, errs, code = runUSB(t, "usb", "convert", "--to", "1u", cut, "-o", filepath.Join(dir, "cut.txt"))
	if code != 3 || !strings.Contains(errs, "pcapng offset") || !strings.Contains(errs, "cut short") {
		t.Errorf("truncated: exit %d, %q", code, errs)
	}
	if _, errs, code = runUSB(t, "usb", "convert", "--allow-loss", "--to", "1u", cut, "-o", filepath.Join(dir, "cut.txt")); code != 0 {
		t.Errorf("truncated --allow-loss: exit %d, %q", code, errs)
	}
	// A bad text line: error with its line number; --keep-going skips it (exit 3).
	kernel, _ := os.ReadFile(usbLab("lab-capture.0u"))
	lines := strings.SplitAfter(string(kernel), "\n")
	lines[9] = "garbage line here\n"
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o600)
	_, errs, code = runUSB(t, "usb", "convert", "--to", "pcapng", bad, "-o", filepath.Join(dir, "bad.pcapng"))
	if code != 1 || !strings.Contains(errs, "line 10") {
		t.Errorf("bad line: exit %d, %q", code, errs)
	}
	_, errs, code = runUSB(t, "usb", "convert", "--keep-going", "--to", "pcapng", bad, "-o", filepath.Join(dir, "bad.pcapng"))
	if code != 3 || !strings.Contains(errs, "1 unreadable lines skipped") || !strings.Contains(errs, fmt.Sprintf("converted %d events", len(lines)-2)) {
		t.Errorf("--keep-going: exit %d, %q", code, errs)
	}
	// Never write through a symbolic link.
	link := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "target"), link)
	if _, _, code = runUSB(t, "usb", "convert", "--to", "1u", usbLab("lab-capture.pcapng"), "-o", link); code == 0 {
		t.Error("wrote through a symlink")
	}
	// Usage errors exit 2.
	for _, args := range [][]string{
		{"usb", "convert", usbLab("lab-capture.pcapng"), "-o", "-"},
		{"usb", "convert", "--to", "xml", usbLab("lab-capture.pcapng"), "-o", "-"},
		{"usb", "convert", "--to", "pcap", "--link-type", "1", usbLab("lab-capture.pcapng"), "-o", "-"},
		{"usb", "capture", "--ring-size", "1K", "-o", "x"},
		{"usb", "capture", "--method", "dma", "-o", "x"},
		{"usb", "capture"},
	} {
		if _, errs, code := runUSB(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errs)
		}
	}
	if _, errs, _ := runUSB(t, "usb", "capture", "--ring-size", "2M", "-o", "x"); !strings.Contains(errs, "8192 (8K) to 1228800 (1200K)") {
		t.Errorf("ring size bounds not reported: %q", errs)
	}
}

// "-" reads standard input; the format is still detected from the content.
func TestUSBConvertStdin(t *testing.T) {
	f, err := os.Open(usbLab("lab-capture.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	out, errs, code := runUSB(t, "usb", "convert", "--to", "1t", "-", "-o", "-")
	if code != 0 || !strings.Contains(errs, "(pcapng to 1t)") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, " S Ci:") || strings.Count(out, "\n") < 100 {
		t.Fatalf("1t output: %.200q", out)
	}
}

// A file that is no USB capture is refused with one message, with or
// without a window (the window once added "usb convert: " before it).
func TestUSBConvertNotUSBOneMessage(t *testing.T) {
	log := filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log")
	out := filepath.Join(t.TempDir(), "x.txt")
	_, whole, code := runUSB(t, "usb", "convert", "--format", "1u", log, "-o", out)
	want := "iotap: " + log + ": not a usbmon capture: it is mmiotrace log (use 'iotap mmio ...')\n"
	if code != 1 || whole != want {
		t.Errorf("without a window: exit %d, %q, want %q", code, whole, want)
	}
	for _, w := range [][]string{{"--from", "0"}, {"--time", "1..2"}} {
		_, errs, code := runUSB(t, append([]string{"usb", "convert", "--format", "1u", log, "-o", out}, w...)...)
		if code != 1 || errs != whole {
			t.Errorf("%v: exit %d, %q, want %q", w, code, errs, whole)
		}
	}
	if _, err := os.Lstat(out); err == nil {
		t.Error("output left behind")
	}
}
