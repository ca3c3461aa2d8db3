package mmiotrace_test

import (
	"fmt"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/rotate"
)

// FilterArgs parses 'iotap mmio filter' criteria as written; a bad value
// names its flag.
func ExampleFilterArgs() {
	f, err := mmiotrace.FilterArgs{Kinds: []string{"R,W"}, Widths: []int{4}, Addrs: []string{"0xfebc0000-0xfebc0100"}}.Filter()
	fmt.Println(len(f.Ranges), f.Widths == 1<<4, err)
	_, err = mmiotrace.FilterArgs{Widths: []int{3}}.Filter()
	fmt.Println(err)
	_, err = mmiotrace.ParsePacing("fixed", 0)
	fmt.Println(err)
	// Output:
	// 1 true <nil>
	// --width 3: want 1, 2, 4 or 8
	// --pace fixed needs --delay
}

// The flags of 'iotap mmio capture' as a program gives them: FileOptions
// checks them and returns what CaptureToFile needs.
func ExampleCaptureArgs() {
	a := mmiotrace.CaptureArgs{Path: "e1000.log.zst", Bind: "0000:00:03.0", Capture: mmiotrace.CaptureOptions{BufferKB: 8192}}
	o, err := a.FileOptions(rotate.Args{FileSize: "64M", Ring: 4})
	fmt.Println(o.Capture.Bind, o.Rotate.Size, o.Rotate.Files, err)
	a.Bundle = "e1000.tar.gz"
	_, err = a.FileOptions(rotate.Args{FileSize: "64M"})
	fmt.Println(err)
	// Output:
	// 0000:00:03.0 67108864 4 <nil>
	// --bundle needs the log in one file, not --file-size/--file-duration
}
