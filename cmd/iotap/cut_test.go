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

// The readers take the same syntax: usb read --to +D is D after --from,
// @T is the capture's clock (text stamps as printed), mark: is refused.
func TestUSBReadWindowSyntax(t *testing.T) {
	const pcap = "../../testdata/usbmon/lab-capture.pcapng"
	a, _, c1 := runUSB(t, "usb", "read", "--from", "1", "--to", "+1.5", pcap)
	b, _, c2 := runUSB(t, "usb", "read", "--from", "1", "--to", "2.5", pcap)
	if c1 != 0 || c2 != 0 || a != b || a == "" {
		t.Errorf("--to +1.5 vs --to 2.5: exits %d %d, same %v", c1, c2, a == b)
	}
	const text = "../../testdata/usbmon/lab-0u.txt"
	out, serr, code := runUSB(t, "usb", "read", "--from", "@7.1", "--to", "@7.3", text)
	src, _ := os.ReadFile(text)
	want := 0
	for _, l := range strings.Split(string(src), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && f[1] >= "7100000" && f[1] < "7300000" && len(f[1]) == 7 {
			want++
		}
	}
	if got := strings.Count(out, "\n"); code != 0 || got != want || want == 0 {
		t.Errorf("@7.1..@7.3 on text: exit %d (%s), %d events, %d lines in the window", code, serr, got, want)
	}
	if _, serr, code := runUSB(t, "usb", "read", "--from", "mark:x", pcap); code != 2 || !strings.Contains(serr, "no markers") {
		t.Errorf("mark: on usb: exit %d %s", code, serr)
	}
}

// mmio filter takes the same syntax: its accesses in a window are cut's.
func TestMMIOFilterWindowSyntax(t *testing.T) {
	const log = "../../testdata/mmiotrace/e1000-probe.log"
	out := filepath.Join(t.TempDir(), "c.log")
	for _, w := range [][2]string{{"mark:vmlab: unbind", "+0.5"}, {"0.45", "0.5"}, {"@12.3", "@12.4"}} {
		f, serr, code := runUSB(t, "mmio", "filter", "--kind", "R,W", "--from", w[0], "--to", w[1], log)
		if code != 0 {
			t.Fatalf("%v: filter exit %d %s", w, code, serr)
		}
		if _, serr, code := runUSB(t, "cut", "--from", w[0], "--to", w[1], log, "-o", out); code != 0 {
			t.Fatalf("%v: cut exit %d %s", w, code, serr)
		}
		c, _ := os.ReadFile(out)
		acc := func(s string) (n int) {
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") {
					n++
				}
			}
			return n
		}
		if a, b := acc(f), acc(string(c)); a != b || a == 0 {
			t.Errorf("%v: filter keeps %d accesses, cut %d", w, a, b)
		}
	}
}

// 'iotap index FILE' and 'iotap cut' of a file that is no trace name the
// file and say what it is, as the readers do, without the package's name
// ("cut: ").
func TestIndexNotATrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runUSB(t, "index", path)
	want := "iotap: " + path + ": not a trace iotap reads: text (line 1 is not an mmiotrace record: \"hello\")\n"
	if code != 1 || errs != want {
		t.Errorf("exit %d, %q, want %q", code, errs, want)
	}
	if _, err := os.Lstat(path + ".iotapidx"); err == nil {
		t.Error("an index was written")
	}
	// cut says it the same way (it named no file).
	out := filepath.Join(dir, "cut.txt")
	if _, errs, code := runUSB(t, "cut", "--from", "1", path, "-o", out); code != 1 || errs != want {
		t.Errorf("cut: exit %d, %q, want %q", code, errs, want)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Error("a cut was written")
	}
}
