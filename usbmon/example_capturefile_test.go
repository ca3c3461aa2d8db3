package usbmon_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/usbmon"
)

// Capture bus 3 into pcapng files of 100 MiB, the newest ten kept, until
// Ctrl-C ('iotap usb capture --bus 3 --file-size 100M --ring 10'; needs
// Linux, root and usbmon).
func ExampleCaptureToFile() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := usbmon.CaptureToFile(ctx, usbmon.FileOptions{
		Capture: usbmon.CaptureOptions{Bus: 3, Method: usbmon.MethodMmap, Queue: 32 << 20},
		Format:  usbmon.FormatPcapng,
		Path:    "usb.pcapng",
		Rotate:  &rotate.Options{Size: 100 << 20, Files: 10},
		Nice:    -20, NiceIfAllowed: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Stats, res.Files, res.ReadErr, res.WriteErr)
}

// The --nice values of 'iotap usb capture', and the end report of a
// capture into pcap that cut events to a snaplen.
func ExampleParseNice() {
	for _, s := range []string{"auto", "5", "-30"} {
		nice, ifAllowed, err := usbmon.ParseNice(s)
		fmt.Println(nice, ifAllowed, err)
	}
	opt := usbmon.FileOptions{Format: usbmon.FormatPcap, Record: usbmon.RecordOptions{Snaplen: 16}}
	res := usbmon.FileResult{Stats: usbmon.RecordStats{Events: 10, Cut: 2, Method: usbmon.MethodRead}}
	for _, l := range res.Summary(opt) {
		fmt.Println(l)
	}
	// Output:
	// -20 true <nil>
	// 5 false <nil>
	// 0 false usbmon: nice "-30": want -20..19 or auto
	// 10 events in 0s; kernel dropped 0
	// 2 events kept only their first 16 data bytes (--snaplen)
}
