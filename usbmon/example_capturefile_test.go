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
