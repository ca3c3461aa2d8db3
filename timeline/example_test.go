package timeline_test

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/iotap/iotap/timeline"
)

func ExampleWriter() {
	var buf bytes.Buffer
	w := timeline.NewWriter(&buf)
	usb := w.Track(0, "USB", timeline.TrackOptions{})
	ep := w.Track(usb, "1:002 ep 1 IN bulk", timeline.TrackOptions{})
	w.Begin(ep, 1000, "usb", "bulk IN", timeline.Uint("length", 512))
	w.End(ep, 2500, timeline.Str("status", "OK"))
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	st := w.Stats()
	fmt.Println(st.Tracks, "tracks,", st.Slices, "slice,", st.Packets, "packets")
	// Output: 2 tracks, 1 slice, 5 packets
}

func ExampleExport() {
	st, err := timeline.Export(context.Background(), io.Discard,
		[]string{"../testdata/mmiotrace/e1000-probe.log"}, timeline.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := st.Inputs[0]
	fmt.Printf("%s: %d events, %d accesses, %d named, %d markers\n", in.Kind, in.Events, in.Accesses, in.Named, in.Markers)
	// Output: mmio: 11950 events, 11946 accesses, 11946 named, 2 markers
}
