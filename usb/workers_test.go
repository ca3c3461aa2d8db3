package usb

import (
	"errors"
	"testing"
)

// TestPrepareNegativeWorkers: a negative ReadOptions.Workers is an
// *ArgError naming the field, where it used to be taken as 0 (chosen by
// the size of the input); 0, 1 and 2 are taken.
func TestPrepareNegativeWorkers(t *testing.T) {
	_, err := Prepare(ReadOptions{Selection: AnySelection(), Workers: -2})
	var ae *ArgError
	if !errors.As(err, &ae) || ae.Field != "ReadOptions.Workers" || ae.Value != -2 {
		t.Fatalf("Workers -2: %v (%T), want an *ArgError of ReadOptions.Workers -2", err, err)
	}
	if want := "usb: ReadOptions.Workers -2: want 0 (chosen by the size of the input) or more"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	for _, w := range []int{0, 1, 2} {
		if _, err := Prepare(ReadOptions{Selection: AnySelection(), Workers: w}); err != nil {
			t.Errorf("Workers %d: %v", w, err)
		}
	}
}
