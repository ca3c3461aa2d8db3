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

// The --events arguments of 'iotap capture': a registered event's name,
// or an event with its fields, registered for the capture.
func ExampleParseEvent() {
	for _, arg := range []string{"iotap_marker", "req u32 id; char[16] tag", "bad-name"} {
		ev, err := capture.ParseEvent(arg)
		if err != nil {
			fmt.Printf("%q: %v\n", arg, err)
			continue
		}
		fmt.Printf("%q: %s, registered: %v\n", arg, ev.Name, ev.Schema != nil)
	}
	// Output:
	// "iotap_marker": iotap_marker, registered: false
	// "req u32 id; char[16] tag": req, registered: true
	// "bad-name": letters, digits and '_' only
}
