package userevents_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/tracefs"
	"github.com/iotap/iotap/userevents"
)

// TestRecordToFileFailureLeavesNoFile: a recording that fails before any
// event (here: a tracefs without user_events; off Linux: ErrNotSupported)
// leaves neither the file nor a file of the ring behind, and closes or
// aborts what it created.
func TestRecordToFileFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	s, err := userevents.ParseCommand("iotap_t u32 a")
	if err != nil {
		t.Fatal(err)
	}
	lines := userevents.RecordLinesOptions{FS: tracefs.New(t.TempDir()), JSON: true,
		Events: []userevents.Target{{Name: s.Name, Schema: s}}}
	one := filepath.Join(dir, "one.ndjson")
	if _, err := userevents.RecordToFile(context.Background(), userevents.RecordFileOptions{Lines: lines, Path: one}); err == nil {
		t.Fatal("recording without user_events succeeded")
	}
	aborted := false
	create := func(p string) (io.WriteCloser, error) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return &abortable{f, &aborted}, err
	}
	two := filepath.Join(dir, "two.ndjson")
	if _, err := userevents.RecordToFile(context.Background(), userevents.RecordFileOptions{Lines: lines, Path: two, Create: create}); err == nil {
		t.Fatal("recording without user_events succeeded")
	}
	if !aborted {
		t.Error("the file's Abort was not called")
	}
	ring := filepath.Join(dir, "ring.ndjson")
	_, err = userevents.RecordToFile(context.Background(), userevents.RecordFileOptions{Lines: lines,
		Rotate: &rotate.Options{Path: ring, Size: 1 << 10, Files: 2}})
	if err == nil {
		t.Fatal("recording without user_events succeeded")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
	if errors.Is(err, userevents.ErrNotFound) {
		t.Errorf("error %v: not a missing event", err)
	}
}

type abortable struct {
	*os.File
	aborted *bool
}

func (a *abortable) Abort() error {
	*a.aborted = true
	a.File.Close()
	return os.Remove(a.Name())
}
