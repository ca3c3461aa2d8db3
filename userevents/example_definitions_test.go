package userevents_test

import (
	"os"

	"github.com/iotap/iotap/userevents"
)

// 'iotap events status --json' for a user_events_status file.
func ExampleStatus_Write() {
	st, err := userevents.ParseStatus([]byte("http_req # Used by ftrace perf\nidle\n\nActive: 2\nBusy: 1\n"))
	if err != nil {
		panic(err)
	}
	st.Write(os.Stdout, true)
	// Output:
	// {"kind":"input","schema":1,"source":"events","file":null,"format":"user_events_status","clock":null}
	// {"kind":"user_event_status","name":"http_req","used_by":["ftrace","perf"]}
	// {"kind":"user_event_status","name":"idle","used_by":[]}
}

// 'iotap events list' and 'iotap events list --json' for one registered
// event; userevents.ReadDefinitions(fs) reads them all from tracefs.
func ExampleWriteDefinitions() {
	s, err := userevents.ParseCommand("http_req u32 status; __rel_loc char[] path")
	if err != nil {
		panic(err)
	}
	defs := []userevents.Definition{{System: userevents.System, Event: userevents.StatusEvent{Name: s.Name}, Schema: s}}
	userevents.WriteDefinitions(os.Stdout, defs, false)
	userevents.WriteDefinitions(os.Stdout, defs, true)
	// Output:
	// user_events/http_req	http_req u32 status; __rel_loc char[] path
	// {"kind":"input","schema":1,"source":"events","file":null,"format":"user_events_status","clock":null}
	// {"kind":"user_event_def","system":"user_events","name":"http_req","command":"http_req u32 status; __rel_loc char[] path","fields":[{"name":"status","type":"u32","offset":0,"size":4},{"name":"path","type":"__rel_loc char[]","offset":4,"size":4}],"used_by":[]}
}
