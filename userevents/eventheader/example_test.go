package eventheader_test

import (
	"encoding/binary"
	"fmt"

	"github.com/iotap/iotap/userevents/eventheader"
)

func Example() {
	// What a provider writes after the tracepoint's common fields...
	b, _ := eventheader.Append(nil, eventheader.Header{Level: 4}, "Request", []eventheader.Value{
		{Name: "status", Encoding: eventheader.EncValue32, Data: binary.LittleEndian.AppendUint32(nil, 200)},
		{Name: "path", Encoding: eventheader.EncZStringChar8, Data: []byte("/")},
	})
	// ...and what a consumer makes of it, given the tracepoint's name.
	ev, err := eventheader.Decode("MyProvider_L4K1", b)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(eventheader.AppendJSON(nil, ev, eventheader.Meta{TS: 1000, PID: 42, TID: 42})))
	// Output: {"n":"MyProvider:Request","status":200,"path":"/","meta":{"ts":1000,"cpu":0,"pid":42,"tid":42,"level":4,"keyword":"0x1"}}
}
