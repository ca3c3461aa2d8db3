package userevents_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/iotap/iotap/tracefs"
	"github.com/iotap/iotap/userevents"
	"github.com/iotap/iotap/userevents/eventheader"
)

// One event from a script-like program ('iotap events write'): written
// only when something records it.
func ExampleWriteOnce() {
	fs, err := tracefs.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := userevents.ParseCommand("myapp_req u32 id; u64 bytes")
	if err != nil {
		fmt.Println(err)
		return
	}
	err = userevents.WriteOnce(fs, s, 0, uint32(7), uint64(4096))
	if errors.Is(err, userevents.ErrNotEnabled) {
		fmt.Println("nothing records myapp_req")
	} else if err != nil {
		fmt.Println(err)
	}
}

// An EventHeader event laid out for WriteOnceRaw.
func ExampleEventHeaderEvent() {
	status, _ := eventheader.ParseArg("status:u32=404")
	path, _ := eventheader.ParseArg("path=/x")
	s, payload, err := userevents.EventHeaderEvent("MyProvider", "Request", 4, 1, []eventheader.Value{status, path})
	if err != nil {
		fmt.Println(err)
		return
	}
	ev, _ := eventheader.Decode(s.Name, payload)
	fmt.Println(s.Name, ev.EventName, len(ev.Fields), "fields")
	// Output: MyProvider_L4K1 Request 2 fields
}

// The schema of an event from its format file (here the one the lab
// kernel wrote), to write it without knowing its fields beforehand.
func ExampleSchemaOf() {
	data, err := os.ReadFile("testdata/format_iotap_lab_pg.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := userevents.ParseFormat(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := userevents.SchemaOf(f, "iotap_lab_pg")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Command())
	// Output: iotap_lab_pg u32 a; s16 b; __rel_loc char[] s; char[6] c
}

// A persistent event registered, then deleted once nothing uses it
// ('iotap events register' and 'iotap events delete'; needs root).
func ExampleRegisterFS() {
	fs, err := tracefs.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := userevents.ParseCommand("myapp_req u32 id")
	sys, name, flags, err := userevents.RegisterFS(fs, s, userevents.Persist)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sys+"/"+name, "persistent:", flags&userevents.Persist != 0)
	if err := userevents.DeleteWait(fs, "myapp_req", time.Second); err != nil {
		fmt.Println(err)
	}
}

// 'iotap events register NAME FIELDS' and 'iotap events delete NAME' as
// library calls: Check and CheckName find bad arguments before the
// kernel; Register and Delete need root.
func ExampleRegisterRequest() {
	req := userevents.RegisterRequest{Command: "myapp_req u32 id; char[16] tag"}
	if err := req.Check(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(userevents.CheckName("myapp/req"))
	fs, err := tracefs.Find()
	if err != nil {
		return
	}
	// reg.String(): registered myapp_req u32 id; char[16] tag as user_events/myapp_req
	if reg, err := req.Register(fs); err == nil && reg.Flags&userevents.Persist != 0 {
		userevents.Delete(fs, "myapp_req")
	}
	// Output: bad event name "myapp/req"
}
