package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The two data-destroying commands, and their variants through a
// symbolic link and a hard link, now refuse with exit 2 and leave the
// input as it was; a failed conversion leaves an existing output intact.
func TestOutputNeverOverInput(t *testing.T) {
	dir := t.TempDir()
	capture, _ := os.ReadFile(usbLab("lab-capture.pcapng"))
	mlog, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log"))
	a := filepath.Join(dir, "a.pcapng")
	m := filepath.Join(dir, "m.log")
	os.WriteFile(a, capture, 0o644)
	os.WriteFile(m, mlog, 0o644)
	os.Symlink("a.pcapng", filepath.Join(dir, "link.pcapng"))
	os.Link(m, filepath.Join(dir, "hard.log"))

	for _, args := range [][]string{
		{"usb", "convert", "--format", "1u", a, "-o", a},
		{"usb", "convert", "--format", "1u", filepath.Join(dir, "link.pcapng"), "-o", a},
		{"mmio", "filter", "--write", m, "-o", m},
		{"mmio", "filter", "--write", m, "-o", filepath.Join(dir, "hard.log")},
		{"mmio", "read", m, "-o", filepath.Join(dir, ".", "m.log")},
		{"mmio", "names", m, "-o", m},
		{"timeline", a, "-o", filepath.Join(dir, "link.pcapng")},
		{"timeline", dir, "-o", m},
	} {
		_, stderr, code := runUSB(t, args...)
		if code == 0 || !strings.Contains(stderr, "iotap:") {
			t.Errorf("%v: exit %d, %q; want a refusal", args, code, stderr)
		}
		if code != exitUsage && !strings.Contains(stderr, "symbolic link") {
			t.Errorf("%v: exit %d (%q), want %d", args, code, stderr, exitUsage)
		}
	}
	if b, _ := os.ReadFile(a); !bytes.Equal(b, capture) {
		t.Errorf("a.pcapng changed (%d bytes)", len(b))
	}
	if b, _ := os.ReadFile(m); !bytes.Equal(b, mlog) {
		t.Errorf("m.log changed (%d bytes)", len(b))
	}

	// A conversion that fails leaves the previous output in place and no
	// temporary file behind.
	out := filepath.Join(dir, "out.1u")
	os.WriteFile(out, []byte("previous good output\n"), 0o600)
	bad := filepath.Join(dir, "bad.pcapng")
	os.WriteFile(bad, []byte("this is not a capture at all, it is text\n"), 0o600)
	if _, _, code := runUSB(t, "usb", "convert", "--format", "1u", bad, "-o", out); code == 0 {
		t.Errorf("conversion of garbage succeeded")
	}
	if b, _ := os.ReadFile(out); string(b) != "previous good output\n" {
		t.Errorf("failed conversion changed the output: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".iotap-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	// A good one replaces it, mode 0600.
	if _, stderr, code := runUSB(t, "usb", "convert", "--format", "1u", a, "-o", out); code != 0 {
		t.Fatalf("convert: %d %s", code, stderr)
	}
	fi, _ := os.Stat(out)
	if fi.Mode().Perm() != 0o600 || fi.Size() < 1000 {
		t.Errorf("output %v, %d bytes", fi.Mode(), fi.Size())
	}
}
