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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := userevents.RecordToFile(ctx, userevents.RecordFileOptions{
		Lines:  userevents.RecordLinesOptions{Events: []userevents.Target{{Name: s.Name, Schema: s}}, JSON: true},
		Rotate: &rotate.Options{Path: "req.ndjson", Size: 100 << 20, Files: 5},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Events, "events in", res.Files, "lost", res.Lost, "undecodable", res.Bad)
}
