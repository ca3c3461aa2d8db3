package usbmon

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

// TestCopy converts the lab pcapng capture to text and back: the same
// events, the drops the file records carried into the pcapng output, a
// cut input converted up to the cut, a cancelled context stops it.
func TestCopy(t *testing.T) {
	in, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	copyTo := func(ctx context.Context, data []byte, f Format) ([]byte, CopyResult) {
		t.Helper()
		r, _, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		var w Writer
		if f == FormatPcapng {
			w, err = NewPcapngWriter(&out, LinkTypeUSBLinuxMmapped)
		} else {
			w, err = NewWriter(&out, f)
		}
		if err != nil {
			t.Fatal(err)
		}
		res, err := Copy(ctx, w, r)
		if err != nil {
			t.Fatal(err)
		}
		return out.Bytes(), res
	}
	ctx := context.Background()
	ng, res := copyTo(ctx, in, FormatPcapng)
	if res.ReadErr != nil || res.Events == 0 {
		t.Fatalf("pcapng -> pcapng: %+v", res)
	}
	// pcapng -> 1u, and the pcapng copy -> 1u: the same text.
	t1, r1 := copyTo(ctx, in, Format1u)
	t2, r2 := copyTo(ctx, ng, Format1u)
	if !bytes.Equal(t1, t2) || r1.Events != res.Events || r2.Events != res.Events || r1.Dropped != r2.Dropped {
		t.Errorf("copies differ: %d/%d/%d events, drops %d/%d", res.Events, r1.Events, r2.Events, r1.Dropped, r2.Dropped)
	}
	// A cut file: the events before the cut, and ErrTruncated.
	_, cut := copyTo(ctx, in[:len(in)/2], Format1u)
	if !errors.Is(cut.ReadErr, ErrTruncated) || cut.Events == 0 || cut.Events >= res.Events {
		t.Errorf("cut input: %+v (whole: %d events)", cut, res.Events)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, c := copyTo(cctx, in, Format1u); !errors.Is(c.ReadErr, context.Canceled) || c.Events != 0 {
		t.Errorf("cancelled: %+v", c)
	}
}
