package cut

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/timerange"
)

// OpenReader reads the whole input byte for byte, or with a window the
// bytes 'iotap cut' writes for it; a file of another kind is refused
// with one error whether or not a window is given.
func TestOpenReader(t *testing.T) {
	ctx := context.Background()
	const usb = "../testdata/usbmon/lab-capture.pcapng"
	whole, err := os.ReadFile(usb)
	if err != nil {
		t.Fatal(err)
	}
	read := func(spec timerange.Spec) ([]byte, *Reader, int64) {
		t.Helper()
		r, err := OpenReader(ctx, usb, detect.USB, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		size := r.Size()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b, r, size
	}
	b, r, size := read(timerange.Spec{})
	if !bytes.Equal(b, whole) || r.Stream != nil || size != int64(len(whole)) {
		t.Errorf("whole input: %d bytes read of %d, size %d", len(b), len(whole), size)
	}
	spec, err := timerange.ParseSpec("0.5", "+1s")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := CutFile(ctx, usb, &want, false, nil, Options{Window: spec}); err != nil {
		t.Fatal(err)
	}
	b, r, size = read(spec)
	if !bytes.Equal(b, want.Bytes()) || r.Stream == nil || size != -1 || len(b) >= len(whole) {
		t.Errorf("window: %d bytes read, cut writes %d of %d", len(b), want.Len(), len(whole))
	}
	var msgs []string
	for _, s := range []timerange.Spec{{}, spec} {
		r, err := OpenReader(ctx, "../mmiotrace/testdata/kinds.log", detect.USB, s, nil)
		if r != nil || err == nil {
			t.Fatalf("an mmiotrace log opened as USB (window %v)", s)
		}
		msgs = append(msgs, err.Error())
	}
	if msgs[0] != msgs[1] {
		t.Errorf("a log as USB: %q without a window, %q with one", msgs[0], msgs[1])
	}
}
