package export

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	capdir "github.com/iotap/iotap/capture"
)

// TestExportCaptured: after a capture (a copy of testdata/capture whose
// usb.pcapng is cut short, and whose mmio loss the capture counted), the
// export writes the captures table and the loss says the capture's own
// first, then once what only the export found (the cut pcapng); without
// a Parquet directory nothing is exported and the loss is the capture's.
func TestExportCaptured(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"clocks.json", "events.ndjson", "mmio.log.zst", "usb.pcapng"} {
		b, err := os.ReadFile(filepath.Join("../testdata/capture", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "usb.pcapng" {
			b = b[:len(b)-10]
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lost := []capdir.SourceLoss{{Source: "mmio", Lost: 2, Text: "mmio: 2 events lost"}}
	if err := capdir.WriteLoss(dir, lost); err != nil {
		t.Fatal(err)
	}
	res := &capdir.Result{Dir: dir, Loss: []string{"mmio: 2 events lost"}, Lost: lost}

	c, err := exportCaptured(context.Background(), res, Options{})
	if err != nil || c.Capture != res || c.Rows != nil || !slices.Equal(c.Loss, res.Loss) {
		t.Fatalf("no export: %+v, %v", c, err)
	}
	pq := filepath.Join(t.TempDir(), "pq")
	c, err = exportCaptured(context.Background(), res, Options{Dir: pq})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 3 {
		t.Errorf("%d rows, want one per trace (3): %+v", len(c.Rows), c.Rows)
	}
	if len(c.Loss) != 2 || c.Loss[0] != res.Loss[0] || !strings.HasPrefix(c.Loss[1], filepath.Join(dir, "usb.pcapng")+": ") || !strings.HasSuffix(c.Loss[1], " (recorded in the captures table)") {
		t.Errorf("loss %q: want the capture's, then the cut pcapng's", c.Loss)
	}
	if tables, _ := filepath.Glob(filepath.Join(pq, "captures", "*.parquet")); len(tables) != 1 {
		t.Errorf("captures table: %q", tables)
	}
}
