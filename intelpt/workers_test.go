package intelpt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

// TestNegativeWorkers: a negative count of goroutines given to DumpInput,
// DumpStream (DumpInputOptions.Workers), DumpFile, ComputeStatsFile and
// ComputeStreamStats is an *ArgError naming the field or argument,
// before anything is written, where it used to be taken as one decoder
// or GOMAXPROCS; 0 and 1 decode the trace.
func TestNegativeWorkers(t *testing.T) {
	raw, err := os.ReadFile("testdata/libipt/ovf.pt")
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	cfg, size := in.Config(), int64(len(raw))
	jobs := []struct {
		field string
		run   func(w *bytes.Buffer, n int) error
	}{
		{"DumpInputOptions.Workers", func(w *bytes.Buffer, n int) error {
			_, err := DumpInput(w, in, cfg, DumpOptions{}, DumpInputOptions{CPU: -1, Workers: n})
			return err
		}},
		{"DumpInputOptions.Workers", func(w *bytes.Buffer, n int) error {
			_, err := DumpStream(context.Background(), w, bytes.NewReader(raw), cfg, DumpOptions{}, DumpInputOptions{JSON: true, Workers: n, At: bytes.NewReader(raw), Size: size})
			return err
		}},
		{"DumpFile workers", func(w *bytes.Buffer, n int) error {
			_, err := DumpFile(w, bytes.NewReader(raw), size, cfg, DumpOptions{}, n)
			return err
		}},
		{"ComputeStatsFile workers", func(w *bytes.Buffer, n int) error {
			s, err := ComputeStatsFile(bytes.NewReader(raw), size, cfg, n)
			if s.Bytes > 0 {
				w.WriteString("stats")
			}
			return err
		}},
		{"ComputeStreamStats workers", func(w *bytes.Buffer, n int) error {
			s, err := ComputeStreamStats(context.Background(), bytes.NewReader(raw), bytes.NewReader(raw), size, cfg, n)
			if s.Bytes > 0 {
				w.WriteString("stats")
			}
			return err
		}},
	}
	for _, j := range jobs {
		var w bytes.Buffer
		err := j.run(&w, -2)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Field != j.field || ae.Value != -2 || w.Len() != 0 {
			t.Errorf("%s -2: %v (%T), %d bytes out; want an *ArgError of %s and nothing out", j.field, err, err, w.Len(), j.field)
		} else if want := "intelpt: " + j.field + " -2: want 0 (chosen by the size of the trace) or more"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		for _, n := range []int{0, 1} {
			w.Reset()
			if err := j.run(&w, n); err != nil || w.Len() == 0 {
				t.Errorf("%s %d: %v, %d bytes out", j.field, n, err, w.Len())
			}
		}
	}
}
