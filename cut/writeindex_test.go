package cut

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteIndexFile writes the bytes IndexFile encodes to INPUT.iotapidx,
// mode 0600, readable by ReadIndex; a link in its place is refused and
// left as it was.
func TestWriteIndexFile(t *testing.T) {
	src, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "usb.pcapng")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want, wantSummary, err := IndexFile(ctx, path, 1<<16, nil)
	if err != nil {
		t.Fatal(err)
	}
	summary, err := WriteIndexFile(ctx, path, 1<<16, nil, nil)
	if err != nil || summary != wantSummary || !strings.Contains(summary, "wrote "+path+IndexSuffix) {
		t.Fatalf("%q, %v", summary, err)
	}
	got, err := os.ReadFile(path + IndexSuffix)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%d bytes written, IndexFile encodes %d (%v)", len(got), len(want), err)
	}
	if fi, _ := os.Stat(path + IndexSuffix); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	ix, err := LoadIndex(path + IndexSuffix)
	if err != nil || ix.Records == 0 {
		t.Errorf("the index written does not load: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left in the directory: %v", entries)
	}

	// A link where the index goes is not written through.
	other := filepath.Join(dir, "other")
	os.Remove(path + IndexSuffix)
	if err := os.Symlink(other, path+IndexSuffix); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteIndexFile(ctx, path, 1<<16, nil, nil); err == nil {
		t.Error("wrote through a link")
	}
	if _, err := os.Lstat(other); err == nil {
		t.Error("the link's target was created")
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left in the directory: %v", entries)
	}
}
