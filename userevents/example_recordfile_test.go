package userevents_test

import (
	"context"
	"fmt"
	"time"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/userevents"
)

// Record an event as NDJSON into files of 100 MB, the newest five kept,
// for ten seconds, as 'iotap events record --json --file-size 100M --ring
// 5 --duration 10s 'myapp_req u32 id' -o req.ndjson' does (needs Linux,
// root and a kernel with user_events).
func ExampleRecordToFile() {
	s, err := userevents.ParseCommand("myapp_req u32 id")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := userevents.RecordToFile(context.Background(), userevents.RecordFileOptions{
		Lines:    userevents.RecordLinesOptions{Events: []userevents.Target{{Name: s.Name, Schema: s}}, JSON: true},
		Rotate:   &rotate.Options{Path: "req.ndjson", Size: 100 << 20, Files: 5},
		Duration: 10 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Events, "events in", res.Files)
	if l := res.Loss(); l != "" {
		fmt.Println("incomplete:", l)
	}
}

// What a recording lost, in the words 'iotap events record' uses.
func ExampleRecordLinesResult_Loss() {
	fmt.Printf("%q\n", userevents.RecordLinesResult{Events: 10}.Loss())
	fmt.Println(userevents.RecordLinesResult{Events: 10, Lost: 3, Bad: 1}.Loss())
	// Output:
	// ""
	// 3 event(s) lost, 1 undecodable
}

// The command line of 'iotap events record --json --file-size 100M
// --ring 5 --interval 1s --duration 10m -o req.ndjson 'myapp_req u32 id'
// iotap_marker' checked into RecordToFile's options.
func ExampleRecordArgs() {
	a := userevents.RecordArgs{
		Lines:    userevents.RecordLinesOptions{JSON: true},
		Path:     "req.ndjson",
		Targets:  []string{"myapp_req u32 id", "iotap_marker"},
		Duration: 10 * time.Minute,
		Rotate:   rotate.Args{FileSize: "100M", Ring: 5, Interval: time.Second},
	}
	o, err := a.FileOptions()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range o.Lines.Events {
		fmt.Println(t.Name, t.Schema != nil)
	}
	fmt.Println(o.Rotate.Size, o.Rotate.Files, o.Lines.Interval, o.Duration)
	a.Rotate.FileSize = ""
	_, err = a.FileOptions()
	fmt.Println(err)
	// Output:
	// myapp_req true
	// iotap_marker false
	// 104857600 5 1s 10m0s
	// --ring 5 needs --file-size or --file-duration
}
