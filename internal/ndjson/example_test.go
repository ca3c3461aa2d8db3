package ndjson_test

import (
	"os"

	"github.com/iotap/iotap/internal/ndjson"
)

func Example() {
	w := ndjson.NewWriter(os.Stdout)
	w.B = ndjson.Input(w.B, "usb", "capture.pcapng", "usbmon pcapng", "realtime")
	w.B = ndjson.End(w.B)
	w.B = ndjson.Begin(w.B, "usb_event")
	w.B = ndjson.Uint(w.B, "seq", 1)
	w.B = ndjson.Int(w.B, "ts_ns", 1750417432438355000)
	w.B = ndjson.Null(w.B, "latency_ns")
	w.B = ndjson.Hex(w.B, "data", []byte{0x12, 0x01})
	w.B = ndjson.End(w.B)
	w.Flush()
	// Output:
	// {"kind":"input","schema":1,"source":"usb","file":"capture.pcapng","format":"usbmon pcapng","clock":"realtime"}
	// {"kind":"usb_event","seq":1,"ts_ns":1750417432438355000,"latency_ns":null,"data":"1201"}
}
