package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWindowOutputNotInput: with a window, a command reads the cut of its
// input, not the input itself; an -o naming the input is still refused
// (exit 2) and the input left as it was. Before, mmio read --from @1 -o
// LOG LOG wrote its NDJSON over the log.
func TestWindowOutputNotInput(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"mmio", "read", "--json"}, {"mmio", "read"}, {"mmio", "filter", "--kind", "W"}} {
		log := filepath.Join(t.TempDir(), "in.log")
		if err := os.WriteFile(log, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string(nil), cmd...), "--from", "@1", "-o", log, log)
		var stdout, stderr bytes.Buffer
		code := exitCode(run(context.Background(), args, &stdout, &stderr), &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "same file as an input") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2, the same file as an input", args, code, stderr.String())
		}
		if b, err := os.ReadFile(log); err != nil || !bytes.Equal(b, orig) {
			t.Errorf("%q: the input changed (%d bytes, %v)", args, len(b), err)
		}
	}
}
