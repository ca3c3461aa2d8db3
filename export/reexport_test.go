package export

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestReexportIntoSubdirectory: exporting a directory into a directory
// inside it a second time replaces the first export's tables. They lie
// in the directory walked (detect.DirFiles) but are no trace, so no
// input: the second export read them only to find that out. It was
// refused ("is an input: refusing to write over it") once export walked
// subdirectories.
func TestReexportIntoSubdirectory(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../testdata/usbmon/lab-0u.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "0u.txt"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "parquet")
	var rows [2]int64
	for i := range rows {
		x, err := New(Options{Dir: out})
		if err != nil {
			t.Fatal(err)
		}
		cr, err := x.ExportPath(context.Background(), dir)
		if err != nil {
			t.Fatalf("export %d: %v", i+1, err)
		}
		if len(cr) != 1 {
			t.Fatalf("export %d: %d captures rows, want 1", i+1, len(cr))
		}
		rows[i] = cr[0].Records
	}
	if rows[0] == 0 || rows[1] != rows[0] {
		t.Errorf("records of the two exports: %v", rows)
	}
}
