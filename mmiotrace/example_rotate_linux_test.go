package mmiotrace_test

import (
	"context"
	"fmt"
	"time"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/rotate"
)

// Capture a driver's probe into zstd files of 64 MiB of log, the newest
// four kept, with the records written printed every second ('iotap mmio
// capture --bind ... --file-size 64M --ring 4 --interval 1s'; needs Linux,
// root and a kernel with mmiotrace).
func ExampleNewRotatingLog() {
	dev, err := mmiotrace.ParsePCIAddr("0000:00:03.0")
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := mmiotrace.NewRotatingLog(rotate.Options{Path: "e1000.log.zst", Size: 64 << 20, Files: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := mmiotrace.Capture(context.Background(), w, mmiotrace.CaptureOptions{
		Bind: &dev, Interval: time.Second,
		OnInterval: func(s rotate.Stats) { fmt.Println(s) },
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Lines, "lines in", w.Files().Names(), "lost:", res.Lost())
}
