package mmiotrace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

// TestNegativeWorkers: a negative Workers of ConvertOptions, FilterOptions
// and ReadOptions is an *ArgError naming the field, returned before
// anything is written, where it used to be taken as 0 (chosen by the
// input); 0 and 1 convert the log.
func TestNegativeWorkers(t *testing.T) {
	const plain = "testdata/e1000-bind.log"
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]func(out *bytes.Buffer, workers int) error{
		"ConvertOptions": func(out *bytes.Buffer, workers int) error {
			_, err := ConvertLog(context.Background(), bytes.NewReader(raw), out, Formatter(false, nil), ConvertOptions{Workers: workers})
			return err
		},
		"FilterOptions": func(out *bytes.Buffer, workers int) error {
			_, err := FilterLog(context.Background(), bytes.NewReader(raw), out, &Filter{}, FilterOptions{Workers: workers})
			return err
		},
		"ReadOptions": func(out *bytes.Buffer, workers int) error {
			_, err := ReadLog(context.Background(), bytes.NewReader(raw), out, ReadOptions{JSON: true, File: plain, Workers: workers})
			return err
		},
	}
	for opts, job := range jobs {
		var out bytes.Buffer
		err := job(&out, -2)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Field != opts+".Workers" || ae.Value != -2 || out.Len() != 0 {
			t.Errorf("%s.Workers -2: %v (%T), %d bytes written; want an *ArgError of the field and no output", opts, err, err, out.Len())
		} else if want := "mmiotrace: " + opts + ".Workers -2: want 0 (chosen by the input) or more"; err.Error() != want {
			t.Errorf("%s: error %q, want %q", opts, err, want)
		}
		for _, w := range []int{0, 1} {
			out.Reset()
			if err := job(&out, w); err != nil || out.Len() < len(raw) {
				t.Errorf("%s.Workers %d: %v, %d bytes of %d", opts, w, err, out.Len(), len(raw))
			}
		}
	}
}
