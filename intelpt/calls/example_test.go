package calls_test

import (
	"fmt"

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
