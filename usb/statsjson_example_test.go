package usb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// The records of 'iotap usb stats --json': statistics of every paired
// event, devices named by the identities learnt from their enumeration.
func ExampleAppendStatsNDJSON() {
	f, err := os.Open("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	rd, _, err := usbmon.NewReader(f)
	if err != nil {
		panic(err)
	}
	pl := usb.NewPipeline(rd, nil, nil)
	st := usb.NewStats()
	if err := pl.Each(context.Background(), func(_ uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
		st.Record(ev, p, paired)
		return nil
	}); err != nil {
		panic(err)
	}
	b := usb.AppendStatsNDJSON(nil, "", st, pl.Pairer.Counts(), pl.Identities)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Kind    string `json:"kind"`
			Bus     int    `json:"bus"`
			Dev     int    `json:"dev"`
			VIDPID  string `json:"vidpid"`
			Product string `json:"product"`
			Events  int    `json:"events"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			panic(err)
		}
		switch r.Kind {
		case usb.KindDevice:
			fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %d %d %s %s", r.Kind, r.Bus, r.Dev, r.VIDPID, r.Product)))
		case usb.KindStats:
			fmt.Println(r.Kind, r.Events)
		}
	}
	// Output:
	// usb_device 1 0 0627:0001
	// usb_device 1 1
	// usb_device 1 2
	// usb_device 1 3
	// usb_device 1 4 0409:55aa QEMU USB Hub
	// usb_device 1 5 0627:0001 QEMU USB Keyboard
	// usb_device 2 2
	// usb_device 3 2
	// usb_summary 184
}
