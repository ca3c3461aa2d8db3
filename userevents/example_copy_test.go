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

// What 'iotap events status' prints for a user_events_status file.
func ExampleStatus_WriteText() {
	st, err := userevents.ParseStatus([]byte("http_req # Used by ftrace perf\nidle\n\nActive: 2\nBusy: 1\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	st.WriteText(os.Stdout)
	// Output:
	// http_req                                 used by: ftrace,perf
	// idle                                     used by: -
	// active 2, busy 1
}

// The line 'iotap events list' prints for a registered event;
// userevents.ReadDefinitions(fs) reads them all from tracefs.
func ExampleDefinition_Command() {
	s, err := userevents.ParseCommand("http_req u32 status; __rel_loc char[] path")
	if err != nil {
		fmt.Println(err)
		return
	}
	d := userevents.Definition{System: userevents.System, Event: userevents.StatusEvent{Name: s.Name}, Schema: s}
	fmt.Printf("%s/%s\t%s\n", d.System, d.Event.Name, d.Command())
	// Output:
	// user_events/http_req	http_req u32 status; __rel_loc char[] path
}
