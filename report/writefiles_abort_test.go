package report

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// failingFile is a created file whose writes fail (a full disk); it
// records whether it was aborted.
type failingFile struct{ aborted bool }

func (f *failingFile) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }
func (f *failingFile) Abort() error              { f.aborted = true; return nil }

// TestWriteFilesFailureLeavesNothing: a report file that cannot be
// written is aborted, so that neither it nor the temporary file it was
// written to (".NAME.iotap-N") is left behind: with the default private
// files, and with a caller's Create whose writer can Abort.
func TestWriteFilesFailureLeavesNothing(t *testing.T) {
	r, err := Build(context.Background(), []string{"../testdata/capture/events.ndjson"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := t.TempDir()
	err = r.WriteFiles(context.Background(), io.Discard, []string{filepath.Join(dir, "r.html")}, []string{"no such kind"}, FileOptions{})
	if want := `report: ` + filepath.Join(dir, "r.html") + `: cannot write a "no such kind" output here`; err == nil || err.Error() != want {
		t.Fatalf("an unknown kind of output: %v, want %s", err, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left after the error %v: %v", err, ents)
	}

	f := &failingFile{}
	committed := false
	create := func(string, []string) (io.Writer, func() error, error) {
		return f, func() error { committed = true; return nil }, nil
	}
	err = r.WriteFiles(context.Background(), io.Discard, []string{filepath.Join(dir, "r.html")}, []string{OutputHTML}, FileOptions{Create: create})
	if err == nil || committed || !f.aborted {
		t.Errorf("a failed write: %v, committed %v, aborted %v; want an error, aborted", err, committed, f.aborted)
	}
}
