package userevents_test

import (
	"errors"
	"fmt"

	"github.com/iotap/iotap/userevents"
)

// 'iotap events write --register "req u32 id; char[8] tag" req id=7
// tag=x' as a library call: Check finds bad arguments before the kernel;
// Write (on tracefs, Linux) registers the event and writes it once.
func ExampleWriteRequest() {
	s, _ := userevents.ParseCommand("req u32 id; char[8] tag")
	req := userevents.WriteRequest{Name: "req", Schema: s, Args: []string{"id=7", "tag=toolongtag"}}
	err := req.Check()
	var ae *userevents.ArgError
	fmt.Println(errors.As(err, &ae), ae.Arg)

	// The EventHeader form: the tracepoint to register and its payload.
	tp, payload, err := userevents.EventHeaderArgs("MyProvider:Request", 4, 1, []string{"status:u32=404", "path=/x"})
	fmt.Println(tp.Name, len(payload) > 0, err)
	// Output:
	// true value
	// MyProvider_L4K1 true <nil>
}
