package timeline_test

import (
	"bytes"
	"fmt"

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
