package export

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/iotap/iotap/report"
)

// TestExportReportSameDirFiles: export and report read the same traces
// of a directory holding each kind of input (usbmon text and pcapng,
// mmiotrace, user_events NDJSON, raw Intel PT), some in a subdirectory,
// with files that are no trace and traces in a hidden directory and a
// fuzz corpus (read by neither): one rule, detect.DirFiles. Export read
// only the files at the top, so 'export testdata/' found no trace where
// 'report testdata' found nine.
func TestExportReportSameDirFiles(t *testing.T) {
	dir := t.TempDir()
	put := func(name, from string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put("lab-0u.txt", "../testdata/usbmon/lab-0u.txt")
	put("README.md", "../testdata/usbmon/README.md")
	put("usb/lab-capture.pcapng", "../testdata/usbmon/lab-capture.pcapng")
	put("usb/notes.txt", "../testdata/mmiotrace/e1000-probe.pci.txt")
	put("mmio/e1000-probe.log", "../testdata/mmiotrace/e1000-probe.log")
	put("mmio/deeper/events.ndjson", "../testdata/capture/events.ndjson")
	put("pt/ovf.pt", "../intelpt/testdata/libipt/ovf.pt")
	put(".hidden/e1000-probe-copy.log", "../testdata/mmiotrace/e1000-probe.log")
	put("fuzz/lab-0u-copy.txt", "../testdata/usbmon/lab-0u.txt")
	want := []string{"lab-0u.txt", "mmio/deeper/events.ndjson", "mmio/e1000-probe.log", "pt/ovf.pt", "usb/lab-capture.pcapng"}
	for i, w := range want {
		want[i] = filepath.Join(dir, w)
	}

	r, err := report.Build(context.Background(), []string{dir}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var reported []string
	for _, tr := range r.Traces {
		if tr.Err != nil {
			t.Errorf("report: %s: %v", tr.Name, tr.Err)
		}
		reported = append(reported, tr.Path)
	}
	slices.Sort(reported)

	x, err := New(Options{Dir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := x.ExportPath(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, row := range rows {
		exported = append(exported, row.SourceFile)
	}
	slices.Sort(exported)
	if !slices.Equal(reported, want) || !slices.Equal(exported, want) {
		t.Errorf("traces of the directory:\nreport %q\nexport %q\nwant   %q", reported, exported, want)
	}
}

// TestExportDirSameName: two traces of one base name in subdirectories
// of an exported directory would write one table file: an error before
// any table is written, not one trace silently replacing the other.
func TestExportDirSameName(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../testdata/usbmon/lab-0u.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"a", "b"} {
		os.Mkdir(filepath.Join(dir, sub), 0o755)
		if err := os.WriteFile(filepath.Join(dir, sub, "0u.txt"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	x, err := New(Options{Dir: out})
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.ExportPath(context.Background(), dir)
	want := "export: " + filepath.Join(dir, "a", "0u.txt") + " and " + filepath.Join(dir, "b", "0u.txt") + " have the same name, which names their tables' files: export them one by one"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("%d entries written in the output directory", len(ents))
	}
}
