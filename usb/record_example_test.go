package usb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// The pairing pipeline and NDJSON records of 'iotap usb read --json': the
// control transfers that completed with a decoded request.
func ExamplePipeline() {
	f, err := os.Open("../testdata/usbmon/lab-0u.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	rd, _, err := usbmon.NewReader(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	pl := usb.NewPipeline(rd, nil, nil) // nil Filter: every event
	dec := usb.NewDecoder(pl.Identities)
	n := 0
	err = pl.Each(context.Background(), func(seq uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
		if !paired || ev.Transfer != usbmon.Control || n == 2 {
			return nil
		}
		n++
		rec := usb.NewEventRecord(seq, 0, ev, p, paired, dec.Decode(ev, p, paired), pl.Identities)
		b, _ := json.Marshal(struct {
			Seq       uint64 `json:"seq"`
			SubmitSeq uint64 `json:"submit_seq"`
			Request   string `json:"request"`
		}{rec.Seq, *rec.SubmitSeq, rec.Request})
		fmt.Println(string(b))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"seq":68,"submit_seq":67,"request":"GET_STATUS"}
	// {"seq":70,"submit_seq":69,"request":"CLEAR_FEATURE"}
}
