package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/compress"
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

// TestWindowOutputNamesInput: what a windowed command writes to -o names
// the user's input, as what it prints on standard output does: the
// NDJSON input record of mmio read and mmio names, plain and compressed.
// Before, the file said "file":"/tmp/iotap-window-NNN/in.log", the
// window's cut.
func TestWindowOutputNamesInput(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "in.log")
	if err := os.WriteFile(log, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd []string
		out string
	}{
		{[]string{"mmio", "read", "--json"}, "read.json"},
		{[]string{"mmio", "read", "--json"}, "read.json.zst"},
		{[]string{"mmio", "names", "--json"}, "names.json.gz"},
	} {
		out := filepath.Join(dir, c.out)
		args := append(append([]string(nil), c.cmd...), "--from", "0", "-o", out, log)
		var stdout, stderr bytes.Buffer
		if code := exitCode(run(context.Background(), args, &stdout, &stderr), &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr.String())
		}
		b := readMaybeCompressed(t, out)
		first, _, _ := strings.Cut(string(b), "\n")
		if !strings.Contains(first, `"file":"`+log+`"`) || strings.Contains(string(b), "iotap-window-") {
			t.Errorf("%q: the output names the window's cut, not %s: %.200s", args, log, first)
		}
	}
}

// readMaybeCompressed is the file at path, decompressed when it is
// gzip, xz or zstd (compress.Decompress detects it from the content).
func readMaybeCompressed(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _, done, err := compress.Decompress(f)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
