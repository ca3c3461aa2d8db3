package timeline_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/timeline"
)

// TestDirInputs lists a capture directory: the traces by content (not by
// name), its clocks.json, and neither the README, hidden files nor
// subdirectories.
func TestDirInputs(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(src, name string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("../testdata/capture/usb.pcapng", "b-no-extension")
	copyFile("../testdata/capture/mmio.log.zst", "a.log.zst")
	copyFile("../testdata/capture/clocks.json", "clocks.json")
	copyFile("../testdata/capture/README.md", "README.md")
	copyFile("../testdata/capture/usb.pcapng", ".hidden.pcapng")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	traces, clocks, err := timeline.DirInputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.log.zst"), filepath.Join(dir, "b-no-extension")}
	if strings.Join(traces, ",") != strings.Join(want, ",") || clocks != filepath.Join(dir, "clocks.json") {
		t.Fatalf("DirInputs = %q, %q; want %q and the clocks.json", traces, clocks, want)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(filepath.Join(dir, "a.log.zst"), 0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := timeline.DirInputs(dir); err == nil {
			t.Fatal("an unreadable file was left out instead of being an error")
		}
	}
}

// TestWriteTable exports the bundled capture directory and checks the
// table against independent counts: tshark's frames of the USB capture,
// the access, MARK, MAP and UNMAP lines of the mmiotrace log (zstd -dc | grep), the
// lines of the NDJSON file.
func TestWriteTable(t *testing.T) {
	tshark, err1 := exec.LookPath("tshark")
	zstd, err2 := exec.LookPath("zstd")
	if err1 != nil || err2 != nil {
		t.Skip("tshark or zstd not installed")
	}
	const dir = "../testdata/capture"
	clk, err := timeline.LoadClocks(dir + "/clocks.json")
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{dir + "/events.ndjson", dir + "/mmio.log.zst", dir + "/usb.pcapng"}
	st, err := timeline.Export(context.Background(), io.Discard, paths, timeline.Options{Clocks: clk})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	st.WriteTable(&b, "out.pftrace")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasPrefix(lines[0], "wrote out.pftrace: ") || !strings.HasPrefix(lines[1], "SOURCE ") || len(lines) != 5 {
		t.Fatalf("table:\n%s", b.String())
	}
	count := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strconv.Itoa(strings.Count(string(out), "\n"))
	}
	mmio, err := exec.Command("sh", "-c", zstd+" -dc "+dir+"/mmio.log.zst | grep -cE \"^(R|W|MARK|MAP|UNMAP) \"").Output()
	if err != nil {
		t.Fatal(err)
	}
	events := strconv.Itoa(bytes.Count(must(os.ReadFile(dir+"/events.ndjson")), []byte("\n")))
	want := map[string]string{
		dir + "/usb.pcapng":    count(tshark, "-r", dir+"/usb.pcapng", "-T", "fields", "-e", "frame.number"),
		dir + "/mmio.log.zst":  strings.TrimSpace(string(mmio)),
		dir + "/events.ndjson": events,
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if w, ok := want[f[1]]; !ok || f[2] != w || f[len(f)-1] != "ALIGNED" {
			t.Errorf("row %q: want %s events (independent count), aligned", l, w)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestStatsLoss cuts a capture and checks that the loss names the input
// and its truncation, and that a whole capture has none.
func TestStatsLoss(t *testing.T) {
	b, err := os.ReadFile("../testdata/capture/usb.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.pcapng")
	if err := os.WriteFile(cut, b[:len(b)-10], 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := timeline.Export(context.Background(), io.Discard, []string{cut}, timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	loss := st.Loss()
	if len(loss) != 1 || !strings.HasPrefix(loss[0], cut+": truncated") {
		t.Fatalf("Loss of a cut capture = %q", loss)
	}
	st, err = timeline.Export(context.Background(), io.Discard, []string{"../testdata/capture/usb.pcapng"}, timeline.Options{})
	if err != nil || len(st.Loss()) != 0 {
		t.Fatalf("Loss of a whole capture = %q, %v", st.Loss(), err)
	}
}

// SizeWarning says nothing at or under the limit, and names the size and
// the remedies over it.
func TestSizeWarning(t *testing.T) {
	if w := timeline.SizeWarning("t.pftrace", 100<<20, 100<<20, false); w != "" {
		t.Errorf("warning at the limit: %q", w)
	}
	w := timeline.SizeWarning("t.pftrace", 300<<20, 100<<20, true)
	for _, s := range []string{"t.pftrace will be about 300 MB", "over 100 MB", "--max-size", "iotap export"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q lacks %q", w, s)
		}
	}
}

// The size of a trace is extrapolated from the start of the inputs, once
// enough of them was read, to warn early that the Perfetto UI will not
// open it.
func TestEstimateSize(t *testing.T) {
	for _, tc := range []struct {
		read, total, written int64
		want                 int64
		ok                   bool
	}{
		{128 << 20, 1 << 30, 330 << 20, 2640 << 20, true}, // a 1 GB mmio log: 2.6 GB
		{4 << 20, 100 << 20, 1 << 20, 0, false},           // under 8 MB read
		{10 << 20, 1 << 30, 1 << 20, 0, false},            // under 2 % read
		{10 << 20, 0, 1 << 20, 0, false},                  // size unknown (a pipe)
		{10 << 20, 10 << 20, 3 << 20, 3 << 20, true},
	} {
		got, ok := timeline.EstimateSize(tc.read, tc.total, tc.written)
		if ok != tc.ok || got != tc.want {
			t.Errorf("EstimateSize(%d, %d, %d) = %d %v, want %d %v", tc.read, tc.total, tc.written, got, ok, tc.want, tc.ok)
		}
	}
}
