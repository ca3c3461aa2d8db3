package report_test

import (
	"context"
	"fmt"
	"log"

	"github.com/iotap/iotap/report"
)

// Build summarises the traces of a directory; each trace keeps its
// source's summary.
func Example() {
	r, err := report.Build(context.Background(), []string{"../testdata/capture"}, report.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for _, t := range r.Traces {
		fmt.Printf("%s: %s (%s) aligned=%v %s\n", t.Name, t.Source, t.Format, t.Aligned, t.Status())
		if t.USB != nil {
			for _, e := range t.USB.Stats.Endpoints() {
				fmt.Printf("  ep %02x: %d bytes, p99 latency %s\n", e.Endpoint, e.Bytes, report.FmtMicros(e.Latency.Quantile(0.99)))
			}
		}
	}
	// Output:
	// ../testdata/capture/events.ndjson: events (user_events NDJSON) aligned=true ok
	// ../testdata/capture/mmio.log.zst: mmio (mmiotrace log) aligned=true ok
	// ../testdata/capture/usb.pcapng: usb (usbmon pcapng) aligned=true ok
	//   ep 81: 8218 bytes, p99 latency 7.315ms
	//   ep 02: 62 bytes, p99 latency 1.033ms
}
