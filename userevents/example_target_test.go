package userevents_test

import (
	"fmt"

	"github.com/iotap/iotap/userevents"
)

// The arguments of 'iotap events record' and 'iotap capture --events': a
// registered event's name, or an event with its fields, registered for
// the recording.
func ExampleParseTarget() {
	for _, arg := range []string{"iotap_marker", "req u32 id; char[16] tag", "bad-name"} {
		ev, err := userevents.ParseTarget(arg)
		if err != nil {
			fmt.Printf("%q: %v\n", arg, err)
			continue
		}
		fmt.Printf("%q: %s, registered: %v\n", arg, ev.Name, ev.Schema != nil)
	}
	// Output:
	// "iotap_marker": iotap_marker, registered: false
	// "req u32 id; char[16] tag": req, registered: true
	// "bad-name": letters, digits and '_' only
}

// The arguments of 'iotap events record' at once: an error names the
// argument.
func ExampleParseTargets() {
	ts, err := userevents.ParseTargets([]string{"iotap_marker", "req u32 id"})
	fmt.Println(len(ts), ts[1].Name, err)
	_, err = userevents.ParseTargets([]string{"iotap_marker", " bad-name "})
	fmt.Println(err)
	// Output:
	// 2 req <nil>
	// "bad-name": letters, digits and '_' only
}
