package timerange_test

import (
	"fmt"

	"github.com/iotap/iotap/internal/timerange"
)

func Example() {
	w, err := timerange.Parse("1.5", "2s")
	fmt.Println(w.From, w.To, err)
	fmt.Println(w.Contains(1_600_000_000), w.Contains(2_000_000_000))
	_, err = timerange.Parse("5", "1")
	fmt.Println(err)
	_, err = timerange.Parse("inf", "")
	fmt.Println(err)
	// Output:
	// 1500000000 2000000000 <nil>
	// true false
	// --from 5 is not before --to 1: the window [from, to) holds nothing
	// --from: "inf" is not a finite number of seconds
}
