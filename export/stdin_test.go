package export_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/export"
)

// Standard input ("-") is refused as a pipe is, by name, with nothing
// written: it said 'export: stat -: no such file or directory'.
func TestExportRefusesStdin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pq")
	x, err := export.New(export.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.ExportPath(context.Background(), "-")
	if err == nil || !strings.Contains(err.Error(), "standard input cannot be exported") {
		t.Errorf("export of -: %v", err)
	}
}
