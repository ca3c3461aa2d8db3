package export_test

import (
	"context"
	"fmt"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/export"
)

// 'iotap capture --usb --mmio -o /tmp/cap --parquet /tmp/pq -- ip link
// set eth0 up' in one call: the capture session, then its Parquet tables
// (needs Linux and root, so it is compiled, not run).
func ExampleCapture() {
	res, err := export.Capture(context.Background(),
		capture.Options{Dir: "/tmp/cap", USB: true, MMIO: true, Command: []string{"ip", "link", "set", "eth0", "up"}},
		export.Options{Dir: "/tmp/pq"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Rows {
		fmt.Printf("exported %s: %d records\n", r.SourceFile, r.Records)
	}
	fmt.Println("captured into", res.Capture.Dir, "lost:", res.Loss)
}
