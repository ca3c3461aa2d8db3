package userevents_test

import (
	"log"

	"github.com/iotap/iotap/userevents"
)

// A service registers its tracepoint once and writes only when a tracer
// listens.
func Example() {
	p, err := userevents.Open() // tracefs user_events_data
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	req, err := p.Register("http_req u32 status; __rel_loc char[] path")
	if err != nil {
		log.Fatal(err)
	}
	if req.Enabled() { // one atomic load
		req.Write(uint32(200), "/index.html") // one writev, no allocation
	}
}

// Typed events come from a Go struct.
func ExampleRegisterStruct() {
	type httpReq struct {
		Status uint32 `userevents:"status"`
		Path   string `userevents:"path"`
	}
	p, err := userevents.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	ev, err := userevents.RegisterStruct[httpReq](p, "http_req", 0)
	if err != nil {
		log.Fatal(err)
	}
	if ev.Enabled() {
		ev.Write(&httpReq{Status: 404, Path: "/missing"})
	}
}
