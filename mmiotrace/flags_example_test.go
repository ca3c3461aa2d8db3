package mmiotrace_test

import (
	"fmt"

	"github.com/iotap/iotap/mmiotrace"
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
