package calls_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
)

// syms knows two functions: main at 0x1000 and f at 0x2000.
type syms struct{}

func (syms) Func(a uint64) (calls.Func, bool) {
	switch {
	case a >= 0x1000 && a < 0x1100:
		return calls.Func{Entry: 0x1000, End: 0x1100, Name: "main"}, true
	case a >= 0x2000 && a < 0x2100:
		return calls.Func{Entry: 0x2000, End: 0x2100, Name: "f"}, true
	}
	return calls.Func{}, false
}

func (syms) Unknown(a uint64) string { return fmt.Sprintf("%#x", a) }

// Feed blocks to a tracker: main calls f (a 5-byte call at 0x1010), f
// returns, main runs on.
func ExampleTracker() {
	tr := calls.NewTracker(func(c *calls.Call) {
		fmt.Printf("%s depth %d %s, instructions [%d,%d), ended by %s\n", c.Func, c.Depth, c.Kind, c.BeginInsn, c.EndInsn, c.EndReason)
	})
	tr.Thread(1, syms{})
	tr.Block(0x1000, 0x1010, 4, intelpt.ClassCall, 5, false, 100)
	tr.Block(0x2000, 0x2008, 3, intelpt.ClassReturn, 1, false, 110)
	tr.Block(0x1015, 0x1020, 2, intelpt.ClassOther, 0, false, 120)
	tr.Finish(130)
	// Output:
	// f depth 1 call, instructions [4,7), ended by return
	// main depth 0 root, instructions [0,9), ended by trace-end
}

// Read a perf.data that is not a named file as such (here a copy in
// memory; in iotap a temporary copy of standard input): its PT streams
// are read from the io.ReaderAt as they are decoded. The fixture holds
// the trace of CPUs 0 and 3 (testdata/libipt/README.md).
func ExampleReadPerfDataReaderAt() {
	data, err := os.ReadFile("../testdata/libipt/two-cpus.perf.data")
	if err != nil {
		fmt.Println(err)
		return
	}
	in, err := calls.ReadPerfDataReaderAt(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	for _, s := range in.Streams {
		fmt.Printf("%s: cpu %d\n", s.Name(), s.CPU)
	}
	fmt.Printf("loss: %q\n", in.Loss)
	// Output:
	// cpu 0: cpu 0
	// cpu 3: cpu 3
	// loss: ""
}
