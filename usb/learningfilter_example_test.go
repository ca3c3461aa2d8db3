package usb_test

import (
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// Keep the events of a device by its vendor id, learnt from its
// enumeration in the capture ('iotap usb convert -Y').
func ExampleParseLearningFilter() {
	keep, err := usb.ParseLearningFilter("usb.vid == 0x0627")
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.Open("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	r, _, err := usbmon.NewReader(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, kept := 0, 0
	var ev usbmon.Event
	for {
		if err := r.ReadInto(&ev); err == io.EOF {
			break
		} else if err != nil {
			fmt.Println(err)
			return
		}
		n++
		if keep(&ev) {
			kept++
		}
	}
	fmt.Println(kept, "of", n, "events")
	// Output:
	// 29 of 184 events
}
