package export

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzExport feeds arbitrary bytes through detection and the export of
// whatever kind they are detected as: no panic, and a decoding problem is
// recorded as loss in the captures row (with its position), never skipped
// silently. Seeds: the bundled captures' heads and damaged lines.
func FuzzExport(f *testing.F) {
	for _, p := range []string{"../testdata/capture/events.ndjson", "../testdata/usbmon/lab-0u.txt"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	if b, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log"); err == nil {
		f.Add(b[:4096])
	}
	if b, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng"); err == nil {
		f.Add(b[:2048])
	}
	f.Add([]byte(`{"name":"x","ts":1,"fields":{"a":18446744073709551615,"b":-1,"c":"s","d":1.5,"e":[1]}}` + "\n"))
	f.Add([]byte(`{"name":"x","ts":18446744073709551615}` + "\n{\n"))
	f.Add([]byte("VERSION 20070824\nR 4 1.000001 1 0xfebc0008 0x1 0x0 0\nR 4 x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "input")
		if err := os.WriteFile(in, data, 0o600); err != nil {
			t.Fatal(err)
		}
		x, err := New(Options{Dir: filepath.Join(dir, "out"), RowGroupRows: 64})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := x.ExportPath(context.Background(), in)
		if err != nil {
			return // not an input of a known kind, or unreadable from the start
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if !r.Complete && r.Loss == "" {
				t.Errorf("%s: stopped without saying why", r.Source)
			}
			if (r.SkippedLines > 0 || r.LostEvents > 0 || r.Truncated) && r.Loss == "" {
				t.Errorf("%s: loss counted but not described: %+v", r.Source, r)
			}
		}
	})
}
