package capture_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/timeline"
)

// A capture directory written by Run (here the lab's, in testdata) read
// back and merged on one clock.
func ExampleLoad() {
	d, err := capture.Load("../testdata/capture")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range d.Traces {
		fmt.Println(filepath.Base(p))
	}
	st, err := timeline.Export(context.Background(), io.Discard, d.Traces, timeline.Options{Clocks: d.Clocks})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("aligned:", st.Aligned)
	// Output:
	// events.ndjson
	// mmio.log.zst
	// usb.pcapng
	// aligned: true
}

// Capturing USB and MMIO while a command runs (needs Linux and root).
func ExampleRun() {
	res, err := capture.Run(context.Background(), capture.Options{
		Dir: "/tmp/cap", USB: true, MMIO: true, Command: []string{"ip", "link", "set", "eth0", "up"},
		Logf: func(format string, args ...any) { fmt.Printf(format+"\n", args...) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lost:", res.Loss)
}

// The end of a capture that lost events: an error (iotap exits 3), or
// with the loss allowed, a warning.
func ExampleEndLoss() {
	warn := func(s string) { fmt.Println("warning:", s) }
	loss := "capture: usb: 3 events dropped by the kernel"
	fmt.Println(capture.EndLoss(loss, " (use --allow-loss to accept)", false, warn))
	fmt.Println(capture.EndLoss(loss, " (use --allow-loss to accept)", true, warn))
	// Output:
	// capture: usb: 3 events dropped by the kernel (use --allow-loss to accept)
	// warning: capture: usb: 3 events dropped by the kernel
	// <nil>
}

// The flags of 'iotap capture' as a program gives them.
func ExampleArgs() {
	o, err := capture.Args{Dir: "cap", USB: true, MMIO: true, Bind: "0000:00:03.0", Events: []string{"iotap_marker"}}.Options()
	fmt.Println(o.Bind, o.Events[0].Name, err)
	_, err = capture.Args{Dir: "cap", USB: true, Bind: "0000:00:03.0"}.Options()
	fmt.Println(err)
	// Output:
	// 0000:00:03.0 iotap_marker <nil>
	// --bind needs --mmio
}
