package userevents_test

import (
	"context"
	"fmt"
	"os"

	"github.com/iotap/iotap/userevents"
)

// Print the tracepoint samples of a perf.data file ('perf record -e
// user_events:...') that a filter keeps, as 'iotap events read -Y' does.
func ExamplePerfDataReader_CopyTo() {
	f, err := os.Open("testdata/linuxtracepoints/perf.data")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	fi, _ := f.Stat()
	r, err := userevents.NewPerfDataReader(f, fi.Size())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	keep, err := userevents.ParseFilter(`event.name == "sched_switch" && event.next_comm == "migration/0"`)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := r.CopyTo(context.Background(), os.Stdout, userevents.CopyOptions{Keep: keep})
	fmt.Println(n, err)
	// Output:
	// 12782.555136396 [000] 2384 sched_switch: prev_comm="perf" prev_pid=2384 prev_prio=120 prev_state=2 next_comm="migration/0" next_pid=17 next_prio=0
	// 1 <nil>
}
