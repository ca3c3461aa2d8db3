package symtab_test

import (
	"fmt"

	"github.com/iotap/iotap/intelpt/symtab"
)

// Name a run-time address of a PIE loaded at 0x555555554000 (the test
// program of the calls tests, built with gcc -fPIE -pie).
func Example() {
	tab, err := symtab.Open("../testdata/calls/prog", symtab.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	const base = 0x555555554000
	// The mapping of the code segment: start address and file offset.
	start, pgoff := uint64(base+0x1000), uint64(0x1000)
	link, _ := tab.LinkAddr(start, pgoff, base+0x11e9)
	f, off, _ := tab.Lookup(link)
	fmt.Printf("%#x = %s+%d\n", link, f.Name, off)
	// Output: 0x11e9 = deep+3
}
