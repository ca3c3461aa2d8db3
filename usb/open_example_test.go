package usb_test

import (
	"context"
	"fmt"
	"os"

	"github.com/iotap/iotap/usb"
)

// OpenPipeline reads a capture as 'iotap usb read' does: here the first
// four events of control transfers, as text lines.
func ExampleOpenPipeline() {
	f, err := os.Open("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	sel := usb.AnySelection()
	sel.Type = "ctrl"
	pl, err := usb.OpenPipeline(f, f.Name(), -1, false, usb.ReadOptions{Selection: sel, Limit: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pl.Close()
	readErr := pl.WriteText(context.Background(), os.Stdout, false)
	lost, err := pl.Loss(readErr)
	fmt.Println(lost, err)
	// Output:
	// 40 8.328136 S Ci:1:001:0 GET_STATUS port=4 len=4
	// 41 8.328373 C Ci:1:001:0 OK len=4 lat=237µs status=connection|power change=connection
	// 42 8.328935 S Co:1:001:0 CLEAR_FEATURE C_PORT_CONNECTION port=4
	// 43 8.329005 C Co:1:001:0 OK len=0 lat=70µs
	// [] <nil>
}
