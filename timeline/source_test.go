package timeline

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usbmon"
)

// TestMergeAdaptersMatchExport merges the capture directory through the
// exported reader adapters (as a live capture or a library user would)
// and checks that the Perfetto trace is byte for byte the one Export
// writes from the files.
func TestMergeAdaptersMatchExport(t *testing.T) {
	const dir = "../testdata/capture/"
	clocks, err := LoadClocks(dir + "clocks.json")
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{dir + "usb.pcapng", dir + "mmio.log.zst", dir + "events.ndjson"}
	var want bytes.Buffer
	wst, err := Export(context.Background(), &want, paths, Options{Clocks: clocks})
	if err != nil {
		t.Fatal(err)
	}

	open := func(p string) *os.File {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	rd, _, err := usbmon.NewReader(bufio.NewReader(open(paths[0])))
	if err != nil {
		t.Fatal(err)
	}
	srcs := []Source{
		NewUSBSource(paths[0], rd),
		NewMMIOSource(paths[1], mmiotrace.NewReader(open(paths[1])), nil),
		NewEventsSource(paths[2], open(paths[2])),
	}
	var got bytes.Buffer
	gst, err := Merge(context.Background(), &got, srcs, Options{Clocks: clocks})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("Merge wrote %d bytes, Export %d: traces differ", got.Len(), want.Len())
	}
	for i := range wst.Inputs {
		w, g := *wst.Inputs[i], *gst.Inputs[i]
		if w.BytesRead == 0 {
			t.Errorf("input %d: Export counts no bytes read", i)
		}
		w.BytesRead = 0 // the adapters read what the caller opened
		if w != g {
			t.Errorf("input %d: Merge %+v, Export %+v", i, g, w)
		}
	}
	if wst.Inputs[1].Events == 0 || !gst.Aligned {
		t.Errorf("nothing merged or not aligned: %+v", gst)
	}
}
