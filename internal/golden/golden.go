// Package golden compares test output with a golden file under
// testdata/golden, and rewrites the file instead when IOTAP_UPDATE_GOLDEN
// is set (review the diff before committing it).
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check fails t unless got equals testdata/golden/name byte for byte. With
// IOTAP_UPDATE_GOLDEN set it first writes got there.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv("IOTAP_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (IOTAP_UPDATE_GOLDEN=1 rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
