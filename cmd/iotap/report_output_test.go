package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportOutputNotInputFirst: 'iotap report IN -o OUT' with OUT the
// input (or a link to it) is refused before the report is printed: it
// printed the whole report, then refused the -o file (exit 2 both ways).
func TestReportOutputNotInputFirst(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.log")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "r.html")
	if err := os.Symlink("in.log", link); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := usbRun(t, "report", in, "-o", link)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "output is the same file as an input") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want exit 2, no report, the same-file error", code, len(stdout), stderr)
	}
	if got, _ := os.ReadFile(in); string(got) != string(data) {
		t.Error("the input changed")
	}
}
