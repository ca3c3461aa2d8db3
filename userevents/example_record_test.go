package userevents_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/userevents"
)

// Record an event (registered here, so writers that start later are
// caught) as NDJSON into files of 100 MiB, each starting with the stream's
// input record, the newest five kept, until
// Ctrl-C, printing the events written every second ('iotap events record
// --json --file-size 100M --ring 5 --interval 1s'; needs Linux and root).
func ExampleRecordLines() {
	s, err := userevents.ParseCommand("myapp_req u32 id; u64 bytes")
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := rotate.NewFiles(rotate.Options{Path: "req.ndjson", Size: 100 << 20, Files: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := rotate.NewRotatingLines(files, rotate.LineOptions{Header: userevents.IsNDJSONInput})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := userevents.RecordLines(ctx, w, userevents.RecordLinesOptions{
		Events: []userevents.Target{{Name: s.Name, Schema: s}}, JSON: true,
		Interval: time.Second, OnInterval: func(st rotate.Stats) { fmt.Println(st) },
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d events in %v, %d lost\n", res.Written, files.Names(), res.Lost)
}
