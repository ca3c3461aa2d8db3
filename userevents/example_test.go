package userevents_test

import (
	"fmt"
	"log"

	"github.com/iotap/iotap/userevents"
)

func ExampleParseCommand() {
	s, err := userevents.ParseCommand("req u32 id;char[8] tag;__rel_loc char[] path")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Command())
	for _, f := range s.Fields {
		fmt.Printf("%s: %s at %d, %d bytes\n", f.Name, f.Type, f.Offset, f.Size)
	}
	_, err = userevents.ParseCommand("req long id")
	fmt.Println(err)
	// Output:
	// req u32 id; char[8] tag; __rel_loc char[] path
	// id: u32 at 0, 4 bytes
	// tag: char[8] at 4, 8 bytes
	// path: __rel_loc char[] at 12, 4 bytes
	// userevents: bad command at byte 4: field "long id": type "long": long has no fixed size; use s64/u64 or s32/u32
}

func ExampleSchema_AppendPayload() {
	s, _ := userevents.ParseCommand("req u16 id; __rel_loc char[] path")
	p, err := s.AppendPayload(nil, 7, "/x")
	fmt.Printf("% x %v\n", p, err)
	_, err = s.AppendPayload(nil, 70000, "/x")
	fmt.Println(err)
	// Output:
	// 07 00 00 00 03 00 2f 78 00 <nil>
	// userevents: req field id (payload byte 0): value out of range for u16
}
