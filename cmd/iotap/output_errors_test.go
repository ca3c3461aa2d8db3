package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputErrorMessages: an -o that cannot be written (in a missing
// directory, a directory, a symbolic link, an input) is refused with the
// same message by every mmio command that writes a log or its lines, as
// iotap said it before the commands moved to the shared -o flag (no
// "mmio names: LOG:" before the reason), with its exit code (2 for an
// input, else 1), and nothing is written.
func TestOutputErrorMessages(t *testing.T) {
	log, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"mmio", "names"}, {"mmio", "read"}, {"mmio", "filter", "--kind", "W"}} {
		for _, tc := range []struct {
			out  string
			code int
			msg  string
		}{
			{"DIR/no/x", 1, "iotap: mmio: cannot write DIR/no/x: no such file or directory\n"},
			{"DIR", 1, "iotap: mmio: DIR is a directory (name a file to write)\n"},
			{"DIR/link", 1, "iotap: mmio: DIR/link is a symbolic link: iotap does not write through links (name the target itself, or - for standard output)\n"},
			{log, 2, "iotap: mmio: output is the same file as an input: LOG (write the output to another file)\n"},
		} {
			dir := t.TempDir()
			if err := os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string(nil), cmd...), log, "-o", strings.ReplaceAll(tc.out, "DIR", dir))
			var stdout, stderr bytes.Buffer
			code := exitCode(run(context.Background(), args, &stdout, &stderr), &stderr)
			msg := strings.ReplaceAll(strings.ReplaceAll(stderr.String(), dir, "DIR"), log, "LOG")
			if code != tc.code || msg != tc.msg || stdout.Len() > 0 {
				t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want exit %d, stderr %q", args, code, stdout.Len(), msg, tc.code, tc.msg)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%q: left %v", args, ents)
			}
		}
	}
}
