package detect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/usb"
)

// TestOpenUSB: the bulk IN events of the lab capture that OpenUSB's
// pipeline prints are tshark's (the same frame numbers, usb read's first
// column), read through wrap, which saw the whole file; a bad selection is
// usb.ErrSelection before the input is opened (the path does not exist);
// an MMIO log is refused as not USB.
func TestOpenUSB(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark (the oracle) not installed")
	}
	path := filepath.Join("..", "testdata", "usbmon", "lab-capture.pcapng")
	out, err := exec.Command(tshark, "-r", path, "-Y", "usb.transfer_type == 3 && usb.endpoint_address.direction == 1", "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	if len(want) == 0 {
		t.Fatal("tshark found no bulk IN event")
	}

	opt := usb.ReadOptions{Selection: usb.AnySelection()}
	opt.Selection.Type, opt.Selection.Dir = "bulk", "in"
	var counted countReader
	in, err := OpenUSB(path, opt, func(in *Input) io.Reader {
		counted.r, counted.size = in, in.Size()
		return &counted
	})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	err = in.WriteText(context.Background(), &text, false)
	in.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(text.String()), "\n") {
		got = append(got, strings.Fields(l)[0])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("frames %v, tshark's %v", got, want)
	}
	if counted.n != counted.size || counted.n <= 0 {
		t.Errorf("wrap read %d bytes of %d", counted.n, counted.size)
	}

	opt.Selection.Type = "nosuch"
	if _, err := OpenUSB("no/such/file", opt, nil); !errors.Is(err, usb.ErrSelection) {
		t.Errorf("bad --type: %v, want usb.ErrSelection first", err)
	}
	if _, err := OpenUSB(filepath.Join("..", "testdata", "mmiotrace", "e1000-probe.log"), usb.ReadOptions{Selection: usb.AnySelection()}, nil); !errors.Is(err, ErrNotTrace) {
		t.Errorf("an MMIO log: %v, want ErrNotTrace", err)
	}
}

type countReader struct {
	r       io.Reader
	n, size int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
