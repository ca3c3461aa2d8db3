package ksym_test

import (
	"fmt"
	"strings"

	"github.com/iotap/iotap/ksym"
)

// Name the code address an mmiotrace access recorded.
func ExampleLoad() {
	kallsyms := "ffffffffc0010000 t e1000_probe\t[e1000]\nffffffffc0010400 t e1000_reset_hw\t[e1000]\n"
	modules := "e1000 163840 0 - Live 0xffffffffc0010000\n"
	tab, err := ksym.Load(strings.NewReader(kallsyms), strings.NewReader(modules))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tab.Name(0xffffffffc001041c))
	// Output: e1000_reset_hw+0x1c [e1000]
}
