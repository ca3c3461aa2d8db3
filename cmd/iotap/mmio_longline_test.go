package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMMIOLongLineError: a log with a line over 1 MiB (line 21) fails
// every way 'mmio read' and 'mmio filter' read it, with one error line
// carrying the command's prefix and the file, as 'mmio stats' words it;
// '--check', '-Y', 'filter' and 'filter --write' exited 0 on it.
func TestMMIOLongLineError(t *testing.T) {
	raw, err := os.ReadFile(mmioGolden)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var b bytes.Buffer
	b.Write(bytes.Join(lines[:20], nil))
	b.WriteString("MARK 8.296100 " + strings.Repeat("x", 1100<<10) + "\n")
	b.Write(bytes.Join(lines[20:], nil))
	path := filepath.Join(t.TempDir(), "long.log")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	const tail = ": mmiotrace: line 21: bad mmiotrace line: line longer than 1048576 bytes\n"
	for _, args := range [][]string{
		{"read"},
		{"read", "--check"},
		{"read", "-Y", `mmio.kind == "W"`},
		{"filter"},
		{"filter", "--write"},
		{"filter", "--write", "--workers", "1"},
		{"filter", "--between", "x", "--until", "y"},
	} {
		_, stderr, code := runMMIO(t, append(append([]string{"mmio"}, args...), path, "-o", filepath.Join(t.TempDir(), "out.log"))...)
		if want := "iotap: mmio " + args[0] + ": " + path + tail; code != exitFailure || stderr != want {
			t.Errorf("%q: exit %d, stderr %q; want exit 1, %q", args, code, stderr, want)
		}
	}
}
