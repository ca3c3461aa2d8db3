package mmiotrace_test

import (
	"fmt"
	"os"

	"github.com/iotap/iotap/mmiotrace"
)

// What a log lost, in the words every mmio command uses ('iotap mmio
// stats' exits 3 on it unless --allow-loss).
func ExampleStats_Loss() {
	f, err := os.Open("testdata/kinds.log")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	st, err := mmiotrace.Analyze(f, mmiotrace.StatsOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range st.Loss() {
		fmt.Println(l)
	}
	// Output:
	// the log records 42 lost events (kernel "Lost N events." marks): the trace is incomplete
}
