package mmiotrace_test

import (
	"context"
	"fmt"
	"os"

	"github.com/iotap/iotap/mmiotrace"
)

// Capture a driver's probe into a log file with a bundle that names the
// code of each access, as 'iotap mmio capture --bind 0000:00:03.0
// --bundle e1000.tar.gz -o e1000.log' does (needs Linux, root and a
// kernel with mmiotrace).
func ExampleCaptureToFile() {
	dev, err := mmiotrace.ParsePCIAddr("0000:00:03.0")
	if err != nil {
		fmt.Println(err)
		return
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	res, err := mmiotrace.CaptureToFile(context.Background(), mmiotrace.FileCaptureOptions{
		Capture: mmiotrace.CaptureOptions{Bind: &dev, Logf: logf},
		Path:    "e1000.log",
		Bundle:  "e1000.tar.gz",
		Warn:    func(s string) { logf("warning: %s", s) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if loss := res.LossText(); loss != "" {
		fmt.Printf("%s: retry with BufferKB %d\n", loss, res.SuggestBufferKB())
	}
	fmt.Println(res.Lines, "lines in", res.Files)
}
