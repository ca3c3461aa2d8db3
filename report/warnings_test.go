package report

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestFoldWarnings(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{nil, nil},
		{[]string{"no colon here"}, []string{"no colon here"}},
		{[]string{"a.log: no clocks", "b.log: no clocks", "c.log: cut", "x"},
			[]string{"x", "2 inputs: no clocks (-v lists them)", "c.log: cut"}},
		{[]string{"a: m1", "b: m2", "c: m2", "d: m2", "e: m1"},
			[]string{"3 inputs: m2 (-v lists them)", "2 inputs: m1 (-v lists them)"}},
	} {
		if got := FoldWarnings(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestInputClocks: the clocks.json of a capture directory applies to the
// traces of that directory only.
func TestInputClocks(t *testing.T) {
	capt, other := filepath.Join(t.TempDir(), "capture"), t.TempDir()
	if err := os.MkdirAll(capt, 0o700); err != nil {
		t.Fatal(err)
	}
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("../testdata/capture/clocks.json", filepath.Join(capt, "clocks.json"))
	copyFile("../testdata/capture/usb.pcapng", filepath.Join(capt, "usb.pcapng"))
	copyFile("../testdata/usbmon/lab-0u.txt", filepath.Join(other, "lab-0u.txt"))
	r, err := Build(context.Background(), []string{capt, other}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ic, err := r.InputClocks()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Traces) != 2 || len(ic) != 1 {
		t.Fatalf("%d traces, clocks for %v", len(r.Traces), ic)
	}
	c, ok := ic[filepath.Join(capt, "usb.pcapng")]
	if !ok || c.Sources["usb"].Clock == "" {
		t.Errorf("capture trace clocks: %+v", c)
	}
}
