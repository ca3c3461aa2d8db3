package capture

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzReadLoss: loss.json of a capture directory (a user's file) never
// panics the reader; the sources it accepts are written back by
// WriteLoss and read again the same.
func FuzzReadLoss(f *testing.F) {
	f.Add([]byte(`{"version":1,"sources":[{"source":"usb","lost_events":3,"loss":"usb: 3 events dropped by the kernel"}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"sources":null}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, LossFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadLoss(dir)
		if err != nil || len(got) == 0 {
			return
		}
		again := t.TempDir()
		if err := WriteLoss(again, got); err != nil {
			t.Fatalf("read, but not written back: %v", err)
		}
		back, err := ReadLoss(again)
		if err != nil || !reflect.DeepEqual(got, back) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, got, back)
		}
	})
}
