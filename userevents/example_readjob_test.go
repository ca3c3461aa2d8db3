package userevents_test

import (
	"context"
	"fmt"
	"os"

	"github.com/iotap/iotap/userevents"
)

// 'iotap events read -Y EXPR perf.data' as a library call: Prepare checks
// the filter and places the window before any output is opened, Run
// prints what they keep.
func ExampleReadJob() {
	job := userevents.ReadJob{
		Path:   "testdata/linuxtracepoints/perf.data",
		Filter: `event.name == "sched_switch" && event.next_comm == "migration/0"`,
	}
	if err := job.Prepare(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	r, err := userevents.OpenPerfData(job.Path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	n, err := job.Run(context.Background(), r, os.Stdout)
	fmt.Println(n, err, r.Stats().Loss() == "")
	// Output:
	// 12782.555136396 [000] 2384 sched_switch: prev_comm="perf" prev_pid=2384 prev_prio=120 prev_state=2 next_comm="migration/0" next_pid=17 next_prio=0
	// 1 <nil> true
}
