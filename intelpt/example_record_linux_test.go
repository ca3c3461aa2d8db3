package intelpt_test

import (
	"context"
	"fmt"
	"os"

	"github.com/iotap/iotap/intelpt"
)

// Trace a command in user mode from its exec to its exit into the capture
// directory out, as 'iotap pt capture --user -o out -- ls /' does (needs
// an Intel CPU with PT and root or CAP_PERFMON).
func ExampleRecord() {
	res, err := intelpt.Record(context.Background(), "out", intelpt.RecordOptions{
		Trace:   intelpt.TraceConfig{Chunks: 16, Order: 4, User: true},
		Command: []string{"ls", "/"},
		Run:     true,
		Stdout:  os.Stdout, Stderr: os.Stderr,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range res.Info.Buffers {
		fmt.Println(intelpt.BufferFileName(b.CPU), b.Bytes, "bytes of trace")
	}
	fmt.Println("lost:", res.Lost)
}
