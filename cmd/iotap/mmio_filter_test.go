package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMMIOFilterBadInput: the filter reports a bad line that its criteria
// would drop, with its line number, for a small file (read) and a large
// one (mapped, cut into chunks); --keep-going skips and counts it.
func TestMMIOFilterBadInput(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "bad.log")
	os.WriteFile(small, []byte("VERSION 20070824\nW 4 1.000001 1 0xfebc0000 0x1 0x0 0\nR 4 1.0000x2 1 0xzz 0x1 0x0 0\n"), 0o600)
	var b strings.Builder
	b.WriteString("VERSION 20070824\n")
	const badLine = 50001
	for i := 2; i <= 60000; i++ {
		if i == badLine {
			b.WriteString("R 4 2.000000 1 0xfebc0008 0x80080783 0xq 0\n")
			continue
		}
		fmt.Fprintf(&b, "%s 4 1.%06d 1 0xfebc%04x 0x%x 0xffffffff81000000 0\n", "RW"[i%2:i%2+1], i, i%0x100*4, i)
	}
	big := filepath.Join(dir, "big.log")
	os.WriteFile(big, []byte(b.String()), 0o600)
	if b.Len() < 2<<20 {
		t.Fatalf("big log only %d bytes", b.Len())
	}
	for _, tc := range []struct {
		path string
		line int
		args []string
	}{
		{small, 3, []string{"--write"}},
		{small, 3, []string{"--write", "--workers", "1"}},
		{big, badLine, []string{"--write"}},
		{big, badLine, []string{"--width", "8"}},
		{big, badLine, []string{"--addr", "0x1000-0x2000", "--workers", "1"}},
	} {
		args := append(append([]string{"mmio", "filter"}, tc.args...), tc.path, "-o", os.DevNull)
		_, e, code := runMMIO(t, append(args, "--keep-going=false")...)
		if code != 1 || !strings.Contains(e, fmt.Sprintf("line %d: bad mmiotrace line", tc.line)) {
			t.Errorf("%v: exit %d: %s", tc.args, code, e)
		}
		out, e, code := runMMIO(t, append(args[:len(args)-2], "--keep-going")...)
		if code != 3 || !strings.Contains(e, "1 bad lines skipped") || !strings.Contains(e, fmt.Sprintf("line %d:", tc.line)) {
			t.Errorf("%v --keep-going: exit %d: %s", tc.args, code, e)
		}
		if !strings.HasPrefix(out, "VERSION 20070824\n") {
			t.Errorf("%v --keep-going: output %.40q", tc.args, out)
		}
	}
}

// mmio filter -v says how many lines it kept as every message is said,
// after "iotap: "; the counts are the output's lines and the input's.
func TestMMIOFilterVerbose(t *testing.T) {
	log := filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log")
	src, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := runMMIO(t, "mmio", "filter", "-v", "--write", log)
	want := fmt.Sprintf("iotap: mmio filter: kept %d of %d lines\n", strings.Count(out, "\n"), bytes.Count(src, []byte("\n")))
	if code != 0 || errs != want || strings.Count(out, "\n") == 0 {
		t.Errorf("exit %d, %q, want %q", code, errs, want)
	}
}
