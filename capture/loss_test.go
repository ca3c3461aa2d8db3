package capture

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iotap/iotap/detect"
)

// TestLossFile: loss.json reads back as written, is not taken for a trace
// by package detect (so timeline.DirInputs and export leave it out of a
// capture directory's traces), is never written over, and its absence
// reads as no loss.
func TestLossFile(t *testing.T) {
	dir := t.TempDir()
	if l, err := ReadLoss(dir); err != nil || l != nil {
		t.Fatalf("no loss file: %v, %v", l, err)
	}
	want := []SourceLoss{{Source: "usb", Lost: 3, Text: "usb: 3 events dropped by the kernel"}, {Source: "events", Lost: 1, Text: "events: 1 lost, 0 undecodable"}}
	if err := WriteLoss(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLoss(dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadLoss = %v, %v; want %v", got, err, want)
	}
	if _, err := detect.File(filepath.Join(dir, LossFile)); !errors.Is(err, detect.ErrNotTrace) {
		t.Errorf("detect.File(loss.json): %v, want ErrNotTrace", err)
	}
	if err := WriteLoss(dir, want); err == nil {
		t.Errorf("WriteLoss over an existing loss.json succeeded")
	}
	st, err := os.Stat(filepath.Join(dir, LossFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("loss.json: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	os.WriteFile(filepath.Join(dir, LossFile), []byte(`{"version": 2, "sources": []}`), 0o600)
	if _, err := ReadLoss(dir); err == nil {
		t.Errorf("ReadLoss of version 2 succeeded")
	}
}

// TestEndLoss: no loss is nil; an allowed loss is said through warn, and
// nil; any other is a *LossError whose message is the loss then the
// remedy.
func TestEndLoss(t *testing.T) {
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	if err := EndLoss("", " (remedy)", false, warn); err != nil || warned != nil {
		t.Errorf("no loss: %v, warned %q", err, warned)
	}
	if err := EndLoss("usb: 3 lost", " (remedy)", true, warn); err != nil || !reflect.DeepEqual(warned, []string{"usb: 3 lost"}) {
		t.Errorf("allowed loss: %v, warned %q", err, warned)
	}
	warned = nil
	err := EndLoss("usb: 3 lost", " (remedy)", false, warn)
	var le *LossError
	if !errors.As(err, &le) || err.Error() != "usb: 3 lost (remedy)" || warned != nil {
		t.Errorf("loss: %v (%T), warned %q", err, err, warned)
	}
	if err := EndLoss("usb: 3 lost", "", true, nil); err != nil { // nil warn: not said, no panic
		t.Errorf("allowed loss, nil warn: %v", err)
	}
}
