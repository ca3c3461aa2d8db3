package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// iotap cut and index through the CLI: outputs private, never over the
// input, a stale index ignored with a warning, loss inside a window exit
// code 3 unless --allow-loss, usage errors exit 2.
func TestCutCLI(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	// A "Lost 3 events." marker inside the window.
	src = []byte(strings.Replace(string(src), "MARK 12.932823 vmlab: e1000 bound\n", "MARK 12.932823 vmlab: e1000 bound\nMARK 12.932900 Lost 3 events.\n", 1))
	in := filepath.Join(dir, "probe.log")
	os.WriteFile(in, src, 0o600)
	out := filepath.Join(dir, "w.log")

	if _, serr, code := runUSB(t, "index", in); code != 0 {
		t.Fatalf("index: %d %s", code, serr)
	}
	if fi, err := os.Stat(in + ".iotapidx"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index file: %v %v", fi, err)
	}
	_, serr, code := runUSB(t, "cut", "--from", "@12.2", "--to", "@12.5", in, "-o", out)
	if code != 0 || !strings.Contains(serr, "seeked with the index") {
		t.Fatalf("cut: %d %s", code, serr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("output: %v %v", fi, err)
	}
	_, serr, code = runUSB(t, "cut", "--from", "mark:vmlab: e1000 bound", "--to", "+1s", in, "-o", out)
	if code != 3 || !strings.Contains(serr, "3 lost events") {
		t.Errorf("loss in the window: exit %d, %s", code, serr)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "Lost 3 events.") {
		t.Errorf("the loss marker is not in the cut")
	}
	if _, serr, code = runUSB(t, "cut", "--allow-loss", "--from", "mark:vmlab: e1000 bound", "--to", "+1s", in, "-o", out); code != 0 {
		t.Errorf("--allow-loss: exit %d %s", code, serr)
	}
	// Stale: the input grows after indexing.
	f, _ := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("R 4 13.000000 1 0xfebc0008 0x80080783 0x0 0\n")
	f.Close()
	if _, serr, code = runUSB(t, "cut", "--from", "@12.2", "--to", "@12.5", in, "-o", out); code != 0 || !strings.Contains(serr, "index ignored: stale") || !strings.Contains(serr, "read from the start") {
		t.Errorf("stale index: exit %d, %s", code, serr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cut", "--from", "1", in}, "-o"},
		{[]string{"cut", "--from", "5", "--to", "1", in, "-o", out}, "not before"},
		{[]string{"cut", "--from", "mark:", in, "-o", out}, "marker's name"},
		{[]string{"cut", "--from", "1", in, "-o", in}, "same file"},
		{[]string{"cut", "--from", "1", in, "-o", in + ".iotapidx"}, "same file"},
	} {
		_, serr, code := runUSB(t, tc.args...)
		if code != 2 || !strings.Contains(serr, tc.want) {
			t.Errorf("%v: exit %d, %s", tc.args, code, serr)
		}
	}
}
